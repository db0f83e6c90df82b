import { BadRequestError, PayloadTooLargeError, ValidationError } from '#shared/errors/httpErrors';

export function fileTooLarge(field: string, maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    `The file in "${field}" is larger than the limit of ${describeBytes(maxBytes)}.`,
  );
}

export function fieldTooLarge(field: string, maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    `The form field "${field}" is larger than the limit of ${describeBytes(maxBytes)}.`,
  );
}

export function tooManyFields(maxFields: number): BadRequestError {
  return new BadRequestError(`Too many form fields: the limit is ${maxFields}.`);
}

export function unexpectedFileField(field: string): ValidationError {
  return ValidationError.field(field, 'Unexpected file field.');
}

export function repeatedFileField(field: string): ValidationError {
  return ValidationError.field(field, 'Only one file may be sent in this field.');
}

/** Busboy's messages ("Unexpected end of form", "Malformed part header") in DRF's wording. */
export function malformedMultipart(cause: unknown): BadRequestError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new BadRequestError(`Multipart form parse error - ${reason}`);
}

export function uploadAborted(): BadRequestError {
  return new BadRequestError('The client aborted the upload.');
}

/** "2 MiB (2097152 bytes)", or "1000 bytes" below one KiB. */
export function describeBytes(bytes: number): string {
  const units = ['GiB', 'MiB', 'KiB'] as const;
  for (const [index, unit] of units.entries()) {
    const size = 1024 ** (units.length - index);
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}
