/** Upload ids are UUIDs (lowercase, as generated); anything else names no upload. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isUploadId = (text: string): boolean => UUID.test(text);
