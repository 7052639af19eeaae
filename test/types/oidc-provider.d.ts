// oidc-provider ships no type declarations; the dashboard test uses this much of it.
declare module 'oidc-provider' {
  export default class Provider {
    constructor(issuer: string, configuration: object);
    callback(): (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
  }
}
