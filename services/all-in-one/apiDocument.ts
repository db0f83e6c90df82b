import type { OpenApiDocument } from '#shared/http/openapi/buildOpenApiDocument';
import { loadConfig } from '#shared/config/config';
import type { CommandDeps } from '#services/command-api/commandDeps';
import { buildOpenApiDocument } from '#shared/http/openapi/buildOpenApiDocument';
import { API_INFO } from '#shared/platform/servicePlatform';
import { documentationOnlyDeps, serviceRoutes } from './serviceRoutes';

/** The OpenAPI document of the whole service with the default configuration. */
export function buildServiceApiDocument(): OpenApiDocument {
  const config = loadConfig({});
  const commandDeps = documentationOnlyDeps<CommandDeps>({
    loginTokenTtlMs: config.loginTokenTtlMs,
    maxAvatarBytes: config.maxAvatarBytes,
  });
  const { commands, queries } = serviceRoutes(commandDeps, documentationOnlyDeps());
  return buildOpenApiDocument([...commands, ...queries], API_INFO);
}

export const serialiseApiDocument = (doc: OpenApiDocument): string => `${JSON.stringify(doc, null, 2)}\n`;
