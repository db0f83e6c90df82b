/** What a blob stored without a content type is served as. */
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
