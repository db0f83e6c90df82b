import { ConfigError, loadConfig } from '#shared/config/config';

test('SEARCH_BACKEND is postgres by default, elasticsearch only with ELASTICSEARCH_URL, nothing else', () => {
  expect(loadConfig({}).searchBackend).toBe('postgres');
  expect(loadConfig({ SEARCH_BACKEND: '' }).searchBackend).toBe('postgres');
  expect(
    loadConfig({ SEARCH_BACKEND: 'elasticsearch', ELASTICSEARCH_URL: 'http://es:9200' }).searchBackend,
  ).toBe('elasticsearch');
  expect(() => loadConfig({ SEARCH_BACKEND: 'elasticsearch' })).toThrow(/SEARCH_BACKEND .*ELASTICSEARCH_URL/);
  expect(() => loadConfig({ SEARCH_BACKEND: 'solr' })).toThrow(ConfigError);
});
