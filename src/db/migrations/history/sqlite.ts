import type { Migration } from '../types.js';

// The migrations written by hand before the schema had one description (versions 1 to 7; 5 and
// 6 were handed out to changes that did not land). Frozen: every database made before then was
// made by these, so they stay exactly as they ran. Later migrations are generated into ../steps.
export const sqliteHistory: Migration[] = [
  {
    version: 1,
    name: 'platform core',
    sql: `
create table organizations (
  id text primary key,
  name text not null,
  email text,
  wallet_address text not null,
  wallet_index integer,
  signing_public_key text,
  signing_algorithm text not null,
  webhook_url text,
  webhook_secret_sealed text not null,
  plan text not null,
  is_active integer not null,
  suspended_reason text,
  suspended_at integer,
  apusd_balance_micro integer not null,
  rate_limit_per_hour integer,
  monthly_stream_limit integer,
  last_rotation_at integer,
  created_at integer not null
);
create table api_keys (
  id text primary key,
  organization_id text not null references organizations(id),
  name text not null,
  prefix text not null,
  key_hash text not null,
  scopes text not null,
  rate_limit_per_hour integer,
  revoked_at integer,
  created_at integer not null
);
create unique index api_keys_hash on api_keys (key_hash);
create index api_keys_org on api_keys (organization_id);
create table content (
  id text primary key,
  title text not null,
  description text,
  type text not null,
  duration_ms integer not null,
  resolution text,
  is_watermarked integer not null,
  segment_count integer not null,
  storage_path text,
  status text not null,
  created_at integer not null
);
create table licenses (
  id text primary key,
  organization_id text not null references organizations(id),
  content_id text not null,
  content_type text not null,
  license_scope text not null,
  watermarking_enabled integer not null,
  price_per_stream_micro integer not null,
  is_active integer not null,
  created_at integer not null
);
create unique index licenses_target on licenses (organization_id, content_id, content_type);
create table rate_counters (
  bucket text not null,
  window_start integer not null,
  count integer not null,
  primary key (bucket, window_start)
);
create table admin_wallets (
  address text primary key,
  granted_at integer not null
);
create table admin_nonces (
  nonce text primary key,
  expires_at integer not null,
  used_at integer
);
create table webhook_deliveries (
  id text primary key,
  organization_id text not null references organizations(id),
  event_type text not null,
  body text not null,
  status text not null,
  attempts integer not null,
  response_code integer,
  last_error text,
  next_attempt_at integer,
  lease_until integer,
  created_at integer not null,
  delivered_at integer
);
create index webhook_due on webhook_deliveries (status, next_attempt_at);
create index webhook_org on webhook_deliveries (organization_id, created_at);
create table viewers (
  id text primary key,
  organization_id text not null references organizations(id),
  external_viewer_id text not null,
  binary_id text not null,
  wallet_address text not null,
  wallet_index integer,
  has_own_wallet integer not null,
  email text,
  total_streams integer not null,
  is_blocked integer not null,
  blocked_reason text,
  first_seen integer not null,
  last_seen integer not null
);
create unique index viewers_binary on viewers (binary_id);
create unique index viewers_external on viewers (organization_id, external_viewer_id);
create table stream_sessions (
  id text primary key,
  organization_id text not null references organizations(id),
  api_key_id text not null,
  content_id text not null,
  viewer_id text not null references viewers(id),
  ip_address text,
  user_agent text,
  is_active integer not null,
  bytes_served integer not null,
  expires_at integer not null,
  created_at integer not null
);
create index sessions_org_created on stream_sessions (organization_id, created_at);
create index sessions_viewer on stream_sessions (viewer_id);
`,
  },
  {
    version: 2,
    name: 'catalog page index',
    sql: `create index content_ready on content (status, created_at, id);`,
  },
  {
    version: 3,
    name: 'content key (sealed AES-128 key of the HLS segments)',
    sql: `alter table content add column content_key text;`,
  },
  {
    version: 4,
    name: 'forensic cases (the analysis queue and its reports)',
    sql: `create table forensic_cases (
  id text primary key,
  organization_id text references organizations(id),
  api_key_id text,
  content_id text not null,
  content_type text not null,
  status text not null,
  failure_reason text,
  upload_path text,
  upload_name text,
  upload_bytes integer,
  attempts integer not null,
  lease_until integer,
  classification text,
  binary_id text,
  supported_bits integer,
  matched_viewer_id text,
  matched_session_id text,
  report text,
  created_at integer not null,
  completed_at integer
);
create index cases_org_created on forensic_cases (organization_id, created_at);
create index cases_queue on forensic_cases (status, lease_until);
create index sessions_content_viewer on stream_sessions (content_id, viewer_id);
`,
  },
  {
    version: 7,
    name: 'stream sessions: whether the session is served watermarked (a license may turn it off)',
    sql: `alter table stream_sessions add column watermarked integer not null default 1;`,
  },
];
