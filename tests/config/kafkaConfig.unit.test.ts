import { ConfigError, loadConfig } from '#shared/config/config';

test('without KAFKA_BROKERS there is no relay', () => {
  expect(loadConfig({}).kafka).toBeUndefined();
  expect(loadConfig({ KAFKA_BROKERS: ' , ' }).kafka).toBeUndefined();
});

test('KAFKA_BROKERS is a comma list; client id and topic prefix have defaults', () => {
  expect(loadConfig({ KAFKA_BROKERS: 'kafka-1:9092, kafka-2:9092' }).kafka).toEqual({
    brokers: ['kafka-1:9092', 'kafka-2:9092'],
    clientId: 'brain-catalogue',
    topicPrefix: 'catalogue',
  });
  expect(
    loadConfig({
      KAFKA_BROKERS: 'kafka:9092',
      KAFKA_CLIENT_ID: 'lab-a',
      KAFKA_TOPIC_PREFIX: 'lab_a.catalogue',
    }).kafka,
  ).toEqual({ brokers: ['kafka:9092'], clientId: 'lab-a', topicPrefix: 'lab_a.catalogue' });
});

test.each([
  ['KAFKA_BROKERS', { KAFKA_BROKERS: 'kafka' }],
  ['KAFKA_BROKERS', { KAFKA_BROKERS: 'kafka:9092,http://kafka:9092' }],
  ['KAFKA_TOPIC_PREFIX', { KAFKA_BROKERS: 'kafka:9092', KAFKA_TOPIC_PREFIX: 'has space' }],
])('a bad %s stops start-up with a message naming it', (name, env) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(name);
});
