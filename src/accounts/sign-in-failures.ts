// Why a sign-in that ends in a redirect failed (`/dashboard/sign-in?error=<code>`, docs/api.md
// §19.3): the codes the server may name, each with the one message the sign-in page shows for it.
// The page shows nothing for any other value, so a link cannot put words of its choosing on it,
// and the provider's own text stays in the server's log. No imports: the dashboard bundles it.
export const SIGN_IN_FAILURES = {
  oidc_not_configured: 'OpenID Connect sign-in is not configured.',
  oidc_unreachable: 'The sign-in provider cannot be reached. Try again later.',
  oidc_expired: 'The sign-in took too long or was started in another browser. Start again.',
  oidc_refused: 'The provider refused the sign-in.',
  oidc_unverified: 'The provider’s answer could not be verified. Start again.',
  oidc_no_verified_email: 'The provider did not give a verified email address.',
  oidc_domain_not_allowed: 'Sign-in with addresses of that domain is not allowed here.',
  oidc_not_a_member: 'That address is not a member of any team here. Ask an owner to invite you.',
} as const;

export type SignInFailure = keyof typeof SIGN_IN_FAILURES;

/** The fixed message of a known code; null for anything else. */
export function signInFailureMessage(code: string | null): string | null {
  return code !== null && Object.hasOwn(SIGN_IN_FAILURES, code) ? SIGN_IN_FAILURES[code as SignInFailure] : null;
}
