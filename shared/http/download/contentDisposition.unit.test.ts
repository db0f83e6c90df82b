import { attachmentDisposition } from './contentDisposition';
import { ifRangeHolds, noneMatchHits } from './conditionalHeaders';

describe('attachmentDisposition', () => {
  test('an ASCII name is given in both forms', () => {
    expect(attachmentDisposition('brain.nii.gz')).toBe(
      `attachment; filename="brain.nii.gz"; filename*=UTF-8''brain.nii.gz`,
    );
  });

  test('quotes, backslashes and non-ASCII are replaced in filename and percent-encoded in filename*', () => {
    expect(attachmentDisposition('a "b"\\c (é)*.tif')).toBe(
      `attachment; filename="a _b__c (_)*.tif"; filename*=UTF-8''a%20%22b%22%5Cc%20%28%C3%A9%29%2A.tif`,
    );
  });

  test('a header-splitting name cannot break out of the parameter', () => {
    const value = attachmentDisposition('x\r\nSet-Cookie: a=b.nii');
    expect(value).not.toMatch(/[\r\n]/);
    expect(value).toContain("filename*=UTF-8''x%0D%0ASet-Cookie%3A%20a%3Db.nii");
  });

  test('an empty name falls back', () => {
    expect(attachmentDisposition('')).toBe(`attachment; filename="download"; filename*=UTF-8''download`);
  });
});

describe('conditional headers', () => {
  test('If-None-Match compares weakly, in a list, or *', () => {
    expect(noneMatchHits('"abc"', '"abc"')).toBe(true);
    expect(noneMatchHits('W/"abc"', '"abc"')).toBe(true);
    expect(noneMatchHits('"x", "abc"', '"abc"')).toBe(true);
    expect(noneMatchHits('*', '"abc"')).toBe(true);
    expect(noneMatchHits('"abcd"', '"abc"')).toBe(false);
    expect(noneMatchHits(undefined, '"abc"')).toBe(false);
  });

  test('If-Range holds only for the same strong ETag (or when absent)', () => {
    expect(ifRangeHolds(undefined, '"abc"')).toBe(true);
    expect(ifRangeHolds('"abc"', '"abc"')).toBe(true);
    expect(ifRangeHolds('W/"abc"', '"abc"')).toBe(false);
    expect(ifRangeHolds('Wed, 21 Oct 2015 07:28:00 GMT', '"abc"')).toBe(false);
  });
});
