import { Observable } from "rxjs";
import type { BaseEvent } from "@ag-ui/client";
import {
  AgentRunner,
  AgentRunnerConnectRequest,
  AgentRunnerIsRunningRequest,
  AgentRunnerRunRequest,
  AgentRunnerStopRequest,
} from "@copilotkit/runtime/v2";

/** One call to Parley, for the `headers` function. */
export interface HeaderCall {
  operation: "run" | "connect" | "stop";
  threadId: string;
  /** The caller's headers: what the runtime forwards for this call (the agent's, `authorization`, `x-*`). */
  headers: Record<string, string>;
}

export interface ParleyAgentRunnerOptions {
  /** Parley's CopilotKit endpoint, e.g. `https://chat.example.com/api/chat/copilotkit`. */
  url: string;
  /** The agent on Parley's side (Parley's one agent is `default`, the default). */
  agentId?: string;
  /**
   * Headers for every call to Parley: an object is added to the caller's (winning over them); a function gets
   * the call with the caller's headers and returns every header to send.
   */
  headers?: Record<string, string> | ((call: HeaderCall) => Record<string, string> | Promise<Record<string, string>>);
  /** The fetch to call Parley with (default: the global fetch). */
  fetch?: typeof fetch;
  /** How many threads' callers are kept for `stop` without `hooks` (default 10 000). */
  rememberThreads?: number;
}

/** What Parley answered when it was not what the call needs (`status`, `body`), or Parley out of reach. */
export declare class ParleyRunnerError extends Error {
  readonly status: number | undefined;
  readonly body: string | undefined;
  readonly url: string;
}

/** An AgentRunner whose threads live in Parley. */
export declare class ParleyAgentRunner extends AgentRunner {
  constructor(options: ParleyAgentRunnerOptions);
  /**
   * Give them to the runtime's handler (`hooks` of `createCopilotNodeListener`, `createCopilotRuntimeHandler`, the
   * Express and Hono endpoints) so that a stop acts for the stop request's own caller.
   */
  readonly hooks: {
    onBeforeHandler(context: { request: Request; path?: string; runtime?: unknown; route?: unknown }): undefined;
  };
  /** The agent to register under the runtime's `agents` beside this runner (never run by it). */
  agent(options?: { description?: string; headers?: Record<string, string> }): any;
  run(request: AgentRunnerRunRequest): Observable<BaseEvent>;
  connect(request: AgentRunnerConnectRequest): Observable<BaseEvent>;
  isRunning(request: AgentRunnerIsRunningRequest): Promise<boolean>;
  stop(request: AgentRunnerStopRequest): Promise<boolean>;
}
