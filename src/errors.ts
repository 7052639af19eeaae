// Every error leaves the API as {name, statusCode, message} (docs/api.md §3); handlers throw
// ApiError and the platform turns it into that shape, whatever the layer it came from.
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorName: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toJSON() {
    return { statusCode: this.statusCode, name: this.errorName, message: this.message };
  }
}

export const errors = {
  missingApiKey: () =>
    new ApiError(
      401,
      'missing_api_key',
      'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY',
    ),
  invalidApiKey: () => new ApiError(403, 'invalid_api_key', 'API key is invalid'),
  notSignedIn: () => new ApiError(401, 'not_signed_in', 'Sign in first.'),
  missingCsrf: () => new ApiError(401, 'missing_csrf_token', 'A session cookie authenticates only together with its X-CSRF-Token header.'),
  sessionEnded: () => new ApiError(401, 'session_expired', 'Your session has ended. Sign in again.'),
  restrictedApiKey: () => new ApiError(401, 'restricted_api_key', 'This API key is restricted to only send emails.'),
  notFound: (what: string) => new ApiError(404, 'not_found', `${what} not found`),
  routeNotFound: () => new ApiError(404, 'not_found', 'Route not found'),
  methodNotAllowed: (method: string) => new ApiError(405, 'method_not_allowed', `Method ${method} is not allowed on this route.`),
  badHost: () => new ApiError(400, 'validation_error', 'The Host header is not a valid host.'),
  badJson: (why = 'The request body is not valid JSON.') => new ApiError(400, 'validation_error', why),
  tooLarge: () => new ApiError(413, 'validation_error', 'Request body is too large.'),
  validation: (message: string, status = 422) => new ApiError(status, 'validation_error', message),
  missingField: (field: string) => new ApiError(422, 'missing_required_field', `Missing \`${field}\` field.`),
  /** Resend's message for a malformed address in `field` (docs/api.md §7.1). */
  invalidAddress: (field: string) =>
    new ApiError(
      422,
      'validation_error',
      `Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` or \`Name <email@example.com>\` format.`,
    ),
  invalidField: (field: string, why?: string) => new ApiError(422, 'validation_error', `Invalid \`${field}\` field${why ? `: ${why}` : '.'}`),
  missingParameter: (name: string) => new ApiError(422, 'missing_required_parameter', `Missing \`${name}\` query parameter.`),
  invalidParameter: (message = 'The `id` must be a valid UUID.') => new ApiError(422, 'invalid_parameter', message),
  invalidAccess: () => new ApiError(422, 'invalid_access', 'Access must be "full_access" | "sending_access".'),
  internal: () => new ApiError(500, 'application_error', 'An unexpected error occurred.'),
};

/**
 * The store cannot be reached (cluster mode: the PostgreSQL server is down or unreachable). Nothing
 * was accepted: the API answers 503 `service_unavailable` (docs/api.md §3), SMTP `451 4.3.0`, and
 * both resume by themselves once the database answers again.
 */
export class StoreUnavailable extends ApiError {
  constructor(readonly reason: string) {
    super(503, 'service_unavailable', 'The database is unreachable: nothing was accepted. Try again later.', { 'retry-after': '5' });
  }
}
