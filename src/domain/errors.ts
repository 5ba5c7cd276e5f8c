// Typed domain errors. Domain code throws them with the exact message the client must read
// (SPEC.md §7); the API's error middleware maps each class to its HTTP status. Anything else
// that escapes is a bug and becomes a 500 without details.

/** Base class: an error whose message is safe to show to the caller. */
export abstract class DomainError extends Error {
  abstract readonly status: number;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: the request is malformed or breaks a rule of the resource. */
export class BadRequest extends DomainError {
  readonly status = 400;
}

/** 401: no credential, or a credential that does not authenticate. */
export class Unauthorized extends DomainError {
  readonly status = 401;
}

/** 403: authenticated, but not allowed to do this. */
export class Forbidden extends DomainError {
  readonly status = 403;
}

/** 404: no such resource in the caller's scope. */
export class NotFound extends DomainError {
  readonly status = 404;
}

/** 409: the change collides with existing state. */
export class Conflict extends DomainError {
  readonly status = 409;
}

/** 415: the request body is in a media type or content coding the operation does not read. */
export class UnsupportedMediaType extends DomainError {
  readonly status = 415;
}

/** 429: the same kind of work is already running for this caller; try again when it ends. */
export class TooManyRequests extends DomainError {
  readonly status = 429;
}

/** 502: the engine refused an action for a reason the API has no better answer for. */
export class EngineRefused extends DomainError {
  readonly status = 502;
}

/** 503: a feature that needs configuration the server does not have. */
export class Unavailable extends DomainError {
  readonly status = 503;
}

/** True for errors whose message may be shown to the client. */
export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
