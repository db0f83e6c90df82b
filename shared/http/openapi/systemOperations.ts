/** The framework's own endpoints, documented alongside the service's routes. */
export const SYSTEM_PATHS = {
  '/health/': {
    get: {
      operationId: 'health',
      summary: 'Health check',
      description:
        'Readiness: 200 when every check passes, 503 naming the failing checks otherwise. Checks: the database, the event store, blob storage, projection lag (the age of the oldest event the read models have not applied, against HEALTH_MAX_PROJECTION_LAG_SECONDS), and the state of background loops such as the projection runner where the process has one.',
      tags: ['system'],
      security: [{}],
      responses: {
        200: {
          description: 'Healthy.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/HealthReport' } } },
        },
        503: {
          description: 'Unhealthy.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/HealthReport' } } },
        },
      },
    },
  },
  '/health/live/': {
    get: {
      operationId: 'liveness',
      summary: 'Liveness check',
      description:
        'For process supervisors: 200 while the process is running and serving requests. Checks no dependency, so an outage of the database does not get the process restarted.',
      tags: ['system'],
      security: [{}],
      responses: {
        200: {
          description: 'Alive.',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { status: { type: 'string', enum: ['alive'] } },
                required: ['status'],
              },
            },
          },
        },
      },
    },
  },
  '/metrics/': {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description:
        'Text exposition format 0.0.4: http_requests_total, http_request_duration_seconds (labelled by route template), events appended, projection position and lag, upload processing.',
      tags: ['system'],
      security: [{}],
      responses: {
        200: {
          description: 'Metrics.',
          content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } },
        },
      },
    },
  },
  '/api/schema/': {
    get: {
      operationId: 'schema',
      summary: 'This OpenAPI document',
      tags: ['system'],
      security: [{}],
      responses: {
        200: {
          description: 'OpenAPI 3.1 document.',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
      },
    },
  },
} as const;
