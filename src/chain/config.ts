import { DrmError } from '../errors.js';

/** Where APUSD deposits are watched; absent when the deployment has not configured a chain. */
export interface ChainConfig {
  rpcUrl: string;
  /** the APUSD token contract, lower case */
  token: string;
  /**
   * confirmations a transfer must have before it is credited, its own block counted as 1 (as the
   * deposits view shows them: head − block + 1); 0 credits as soon as it is mined, as 1 does
   */
  confirmations: number;
  pollMs: number;
  /** where a new deployment starts reading: the chain's safe head (default) or a block number */
  startBlock: 'head' | number;
}

export interface ChainInput {
  chainRpc?: string;
  apusdToken?: string;
  confirmations?: string | number;
}

export function resolveChainConfig(input: ChainInput, env: NodeJS.ProcessEnv): ChainConfig | undefined {
  const rpcUrl = input.chainRpc ?? env.DRM_CHAIN_RPC;
  const token = input.apusdToken ?? env.DRM_APUSD_TOKEN;
  if (!rpcUrl && !token) return undefined;
  if (!rpcUrl || !token)
    throw new DrmError('BAD_REQUEST', '--chain-rpc and --apusd-token go together: APUSD deposits need both');
  if (!/^https?:\/\//.test(rpcUrl) || !URL.canParse(rpcUrl))
    throw new DrmError('BAD_REQUEST', `--chain-rpc must be an http(s) URL, got "${rpcUrl}"`);
  if (!/^0x[0-9a-fA-F]{40}$/.test(token))
    throw new DrmError(
      'BAD_REQUEST',
      `--apusd-token must be a contract address (0x and 40 hex digits), got "${token}"`,
    );
  const confirmations = Number(input.confirmations ?? env.DRM_CONFIRMATIONS ?? 12);
  if (!Number.isInteger(confirmations) || confirmations < 0 || confirmations > 1000) {
    throw new DrmError(
      'BAD_REQUEST',
      `--confirmations must be a whole number from 0 to 1000, got "${input.confirmations ?? env.DRM_CONFIRMATIONS}"`,
    );
  }
  const pollSeconds = Number(env.DRM_CHAIN_POLL_SECONDS ?? 5);
  if (!(pollSeconds >= 0.1 && pollSeconds <= 3600))
    throw new DrmError('BAD_REQUEST', 'DRM_CHAIN_POLL_SECONDS must be from 0.1 to 3600');
  const start = env.DRM_CHAIN_START_BLOCK ?? 'head';
  if (start !== 'head' && !/^\d{1,15}$/.test(start))
    throw new DrmError('BAD_REQUEST', 'DRM_CHAIN_START_BLOCK must be head or a block number');
  return {
    rpcUrl,
    token: token.toLowerCase(),
    confirmations,
    pollMs: pollSeconds * 1000,
    startBlock: start === 'head' ? 'head' : Number(start),
  };
}
