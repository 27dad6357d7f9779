/** Public surface of the project registry (projects, API keys, settings). */
export { ProjectRegistry, SITE_ID_PATTERN, assertSiteId, hashToken, generateToken, LAST_USED_WRITE_INTERVAL_MS, KEY_SCOPES, parseScopes } from './registry.js';
export type { NodeKeyInfo, Project, ApiKeyInfo, CreatedKey, ResolvedToken, ProjectDeleteHook, SettingsListener, RegistryOptions, KeyScope, StoredKey, ProjectOverlay } from './registry.js';
export { defaultSettings, embedderSpec, mergePatch, validateSettings, normalizeLanguage, withDefaults, SETTINGS_SECTIONS, SettingsInputSchema, DEFAULT_SEMANTIC_RATIO } from './settings.js';
export type { SettingsInput, SettingsSection } from './settings.js';
export { MASKED_SECRET, keepSecrets, maskSecrets, withoutSecrets } from './secrets.js';
