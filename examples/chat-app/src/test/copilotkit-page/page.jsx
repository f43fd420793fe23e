// CopilotKit's stock React chat (@copilotkit/react-core 1.74.0, the v2 CopilotKitProvider and CopilotChat) talking
// straight to Parley's CopilotKit endpoint, with no Node runtime in between, and a question card for the run's
// interrupts (useInterrupt, as an app adds one) and a line for a run's failure (onError). The page is served from another origin than the host, so it also
// goes through CORS with credentials. ?runtimeUrl=…&thread=… choose the host and the conversation.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import { CopilotKitProvider, CopilotChat, useCopilotKit, useInterrupt } from '@copilotkit/react-core/v2';
import '@copilotkit/react-core/v2/styles.css';

const params = new URLSearchParams(location.search);

/** A pending question (Parley's clarify) with a button per choice; a choice answers it through resume[]. */
function Chat() {
  // for the test: whether the core reached the runtime (typing before that would lose the message)
  window.parleyCopilotKit = useCopilotKit().copilotkit;
  useInterrupt({
    render: ({ interrupt, resolve }) => (
      <div data-testid="parley-question">
        <p>{interrupt?.message}</p>
        {(interrupt?.responseSchema?.enum ?? []).map((choice) => (
          <button key={choice} data-choice={choice} onClick={() => resolve(choice)}>{choice}</button>
        ))}
      </div>
    ),
  });
  // The stock chat shows nothing when a run fails (RUN_ERROR): it reports it to onError, and the app shows it.
  const [error, setError] = useState(null);
  return (
    <>
      {error && <div role="alert" data-testid="parley-error">{error}</div>}
      <CopilotChat threadId={params.get('thread')}
        onError={({ error, code }) => { if (code === 'agent_run_error_event') setError(error.message); }} />
    </>
  );
}

createRoot(document.getElementById('root')).render(
  <CopilotKitProvider runtimeUrl={params.get('runtimeUrl')} credentials="include">
    <div style={{ height: '100vh' }}>
      <Chat />
    </div>
  </CopilotKitProvider>
);
