import { buildServiceApiDocument } from '#services/all-in-one/apiDocument';

interface Operation {
  readonly requestBody?: {
    required: boolean;
    content: Record<string, { schema: { required?: string[]; properties?: Record<string, unknown> } }>;
  };
}

const operation = (path: string, method: string): Operation =>
  (buildServiceApiDocument().paths as Record<string, Record<string, Operation>>)[path]![method]!;

test('POST /api/file-uploads/ is documented with the one body type it accepts: multipart/form-data', () => {
  const body = operation('/api/file-uploads/', 'post').requestBody!;
  expect(Object.keys(body.content)).toEqual(['multipart/form-data']);
  expect(body.required).toBe(true);
});

test('a route taking JSON and forms alike is still documented with all three', () => {
  const body = operation('/api/categories/', 'post').requestBody!;
  expect(Object.keys(body.content).sort()).toEqual([
    'application/json',
    'application/x-www-form-urlencoded',
    'multipart/form-data',
  ]);
});

test('POST /api/brains/: the url-encoded body is documented without the file parts it cannot carry', () => {
  const body = operation('/api/brains/', 'post').requestBody!;
  const properties = (schema: { properties?: Record<string, unknown> }): string[] =>
    Object.keys(schema.properties ?? {});
  const form = body.content['application/x-www-form-urlencoded']!.schema;
  const multipart = body.content['multipart/form-data']!.schema;
  expect(properties(multipart)).toEqual(expect.arrayContaining(['file', 'image', 'upload']));
  expect(properties(form)).toEqual(expect.arrayContaining(['upload', 'name']));
  expect(properties(form)).not.toContain('file');
  expect(properties(form)).not.toContain('image');
});
