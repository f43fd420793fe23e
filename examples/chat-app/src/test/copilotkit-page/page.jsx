// CopilotKit's stock React chat (@copilotkit/react-core 1.74.0, the v2 CopilotKitProvider and CopilotChat) talking
// straight to Parley's CopilotKit endpoint, with no Node runtime in between, and a question card for the run's
// interrupts (useInterrupt, as an app adds one). The page is served from another origin than the host, so it also
// goes through CORS with credentials. ?runtimeUrl=…&thread=… choose the host and the conversation.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { CopilotKitProvider, CopilotChat, useInterrupt } from '@copilotkit/react-core/v2';
import '@copilotkit/react-core/v2/styles.css';

const params = new URLSearchParams(location.search);

/** A pending question (Parley's clarify) with a button per choice; a choice answers it through resume[]. */
function Chat() {
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
  return <CopilotChat threadId={params.get('thread')} />;
}

createRoot(document.getElementById('root')).render(
  <CopilotKitProvider runtimeUrl={params.get('runtimeUrl')} credentials="include">
    <div style={{ height: '100vh' }}>
      <Chat />
    </div>
  </CopilotKitProvider>
);
