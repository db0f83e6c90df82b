import path from 'node:path';

/** swagger-ui-dist files the docs page loads; served from node_modules (no CDN). */
export const SWAGGER_ASSETS: ReadonlySet<string> = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-16x16.png',
  'favicon-32x32.png',
]);

export const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function docsHtml(title: string, docsPath: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)}: API documentation</title>
  <link rel="stylesheet" href="${docsPath}swagger-ui.css">
  <link rel="icon" type="image/png" href="${docsPath}favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${docsPath}swagger-ui-bundle.js"></script>
  <script src="${docsPath}swagger-ui-standalone-preset.js"></script>
  <script src="${docsPath}swagger-initializer.js"></script>
</body>
</html>
`;
}

/** Kept out of the HTML so the page works under a Content-Security-Policy without inline scripts. */
export function docsInitializer(schemaPath: string): string {
  return `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(schemaPath)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;
}
