import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import solc from 'solc';
import { type Address, createTestClient, createWalletClient, type Hex, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { freePort } from './postgres-cluster.js';
import { ROOT } from './serve-process.js';

// A real chain for the tests: anvil from the npm package @foundry-rs/anvil (its binary ships in
// the platform package), and the project's APUSD token (contracts/ApusdToken.sol) compiled with
// solc-js and deployed with viem.

/** anvil's first default account (public test key): deploys the token and mints. */
const DEPLOYER = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
/** anvil's second default account: the payer who sends APUSD. */
export const PAYER = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

export interface Chain {
  rpcUrl: string;
  token: Address;
  /** sends `micro` units (6 decimals) of APUSD from the payer to an address; resolves once mined */
  transfer(to: string, micro: bigint): Promise<Hex>;
  mine(blocks: number): Promise<void>;
  /** anvil_reorg: replaces the newest `depth` blocks with empty ones */
  reorg(depth: number): Promise<void>;
  /** a mined transaction as signed bytes, to send again after a reorg dropped it */
  raw(hash: Hex): Promise<Hex>;
  /** sends signed bytes and resolves once mined */
  sendRaw(raw: Hex): Promise<void>;
  stop(): Promise<void>;
}

export function compileToken(): { abi: unknown[]; bytecode: Hex } {
  const source = fs.readFileSync(path.join(ROOT, 'contracts/ApusdToken.sol'), 'utf8');
  const input = {
    language: 'Solidity',
    sources: { 'ApusdToken.sol': { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'));
  const c = out.contracts['ApusdToken.sol'].ApusdToken;
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

const anvilBin = () =>
  path.join(
    ROOT,
    'node_modules/@foundry-rs',
    `anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`,
    'bin/anvil',
  );

export async function startChain(): Promise<Chain> {
  const port = await freePort();
  const child: ChildProcess = spawn(anvilBin(), ['--port', String(port), '--host', '127.0.0.1', '--silent'], {
    stdio: 'ignore',
  });
  const rpcUrl = `http://127.0.0.1:${port}`;
  const test = createTestClient({ chain: foundry, mode: 'anvil', transport: http(rpcUrl) }).extend(publicActions);
  for (let i = 0; ; i++) {
    if (
      await test.getChainId().then(
        () => true,
        () => false,
      )
    )
      break;
    if (i > 200) throw new Error('anvil did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const { abi, bytecode } = compileToken();
  const deployer = createWalletClient({ account: DEPLOYER, chain: foundry, transport: http(rpcUrl) });
  const payer = createWalletClient({ account: PAYER, chain: foundry, transport: http(rpcUrl) });
  const deployed = await test.waitForTransactionReceipt({ hash: await deployer.deployContract({ abi, bytecode }) });
  const token = deployed.contractAddress as Address;
  const mint = await deployer.writeContract({
    address: token,
    abi,
    functionName: 'mint',
    args: [PAYER.address, 10n ** 15n],
  });
  await test.waitForTransactionReceipt({ hash: mint });
  return {
    rpcUrl,
    token,
    async transfer(to, micro) {
      const hash = await payer.writeContract({
        address: token,
        abi,
        functionName: 'transfer',
        args: [to as Address, micro],
      });
      await test.waitForTransactionReceipt({ hash });
      return hash;
    },
    mine: (blocks) => test.mine({ blocks }),
    async reorg(depth) {
      await test.request({ method: 'anvil_reorg' as never, params: [depth, []] as never });
    },
    raw: (hash) =>
      test.request({ method: 'eth_getRawTransactionByHash' as never, params: [hash] as never }) as Promise<Hex>,
    async sendRaw(raw) {
      const hash = await test.sendRawTransaction({ serializedTransaction: raw });
      await test.waitForTransactionReceipt({ hash });
    },
    async stop() {
      child.kill();
      await new Promise((r) => child.once('exit', r));
    },
  };
}
