// CopilotKit's stock React chat (@copilotkit/react-core 1.74.0: the v2 CopilotKitProvider and CopilotChat) straight
// on a Parley host's CopilotKit endpoint, with no Node runtime in between. Around the stock chat, what an app adds:
// - a thread list (useThreads: the host's GET /threads), a "New chat" button, and the open thread in the address
//   (?thread=…), so a reload, a restart of the host or another instance brings the conversation back;
// - a question card for a run's pending question or approval (useInterrupt); the choice resumes the run;
// - a line for a failed run (the stock chat reports RUN_ERROR to onError and shows nothing itself).
// ?runtimeUrl=… points it at another host (default: the example host on localhost:8080).
import React, { useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import {
  CopilotKitProvider, CopilotChat, UseAgentUpdate, useAgent, useCopilotKit, useInterrupt, useThreads,
} from '@copilotkit/react-core/v2';
import '@copilotkit/react-core/v2/styles.css';
import './app.css';

const params = new URLSearchParams(location.search);
const runtimeUrl = params.get('runtimeUrl') ?? 'http://localhost:8080/api/chat/copilotkit';

/** The thread in the address bar, minting one (and putting it there) when there is none. */
function threadInAddress() {
  const thread = new URLSearchParams(location.search).get('thread');
  if (thread) return thread;
  const minted = crypto.randomUUID();
  showInAddress(minted, 'replace');
  return minted;
}

function showInAddress(threadId, how) {
  const url = new URL(location.href);
  url.searchParams.set('thread', threadId);
  history[how === 'replace' ? 'replaceState' : 'pushState'](null, '', url);
}

/** The caller's threads, newest first; the list is read again whenever a run of the open thread ends. */
function ThreadList({ current, onOpen, onNew }) {
  const { threads, isLoading, listError, refetchThreads } = useThreads({ agentId: 'default' });
  const { agent } = useAgent({ updates: [UseAgentUpdate.OnRunStatusChanged] });
  useEffect(() => {
    if (!agent.isRunning) refetchThreads();
  }, [agent.isRunning, current, refetchThreads]);
  return (
    <nav className="threads" data-testid="parley-threads">
      <button type="button" className="new-chat" data-testid="parley-new-chat" onClick={onNew}>New chat</button>
      {isLoading && <p className="muted">Loading…</p>}
      {listError && <p role="alert" className="muted">Could not load the conversations: {listError.message}</p>}
      <ul>
        {threads.map((thread) => (
          <li key={thread.id}>
            <button type="button" data-thread={thread.id} aria-current={thread.id === current ? 'page' : undefined}
              onClick={() => onOpen(thread.id)}>
              {thread.name || 'New conversation'}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** The stock chat on one thread, with a question card and a line for a failed run. */
function Chat({ threadId }) {
  // read by the browser test: whether the page reached the runtime (a message typed before that is lost)
  window.parleyCopilotKit = useCopilotKit().copilotkit;
  useInterrupt({
    render: ({ interrupt, resolve }) => (
      <div className="question" data-testid="parley-question">
        <p>{interrupt?.message}</p>
        {(interrupt?.responseSchema?.enum ?? []).map((choice) => (
          <button key={choice} data-choice={choice} onClick={() => resolve(choice)}>{choice}</button>
        ))}
      </div>
    ),
  });
  const [error, setError] = useState(null);
  useEffect(() => setError(null), [threadId]);
  return (
    <main className="chat">
      {error && <div role="alert" className="error" data-testid="parley-error">{error}</div>}
      <CopilotChat threadId={threadId}
        onError={({ error, code }) => { if (code === 'agent_run_error_event') setError(error.message); }} />
    </main>
  );
}

function App() {
  const [threadId, setThreadId] = useState(threadInAddress);
  useEffect(() => {
    const back = () => setThreadId(threadInAddress());
    addEventListener('popstate', back);
    return () => removeEventListener('popstate', back);
  }, []);
  const open = useCallback((id) => {
    showInAddress(id, 'push');
    setThreadId(id);
  }, []);
  // a new thread exists on the host only once its first message is sent
  const startNew = useCallback(() => open(crypto.randomUUID()), [open]);
  return (
    <div className="layout">
      <ThreadList current={threadId} onOpen={open} onNew={startNew} />
      <Chat threadId={threadId} />
    </div>
  );
}

createRoot(document.getElementById('root')).render(
  <CopilotKitProvider runtimeUrl={runtimeUrl} credentials="include">
    <App />
  </CopilotKitProvider>
);
