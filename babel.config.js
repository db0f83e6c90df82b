/** Test-time transform only (jest): TypeScript and the ESM-only dependencies to CommonJS for Node 20. */
module.exports = {
  presets: [
    ['@babel/preset-env', { targets: { node: '20' } }],
    ['@babel/preset-typescript', { onlyRemoveTypeImports: true }],
  ],
};
