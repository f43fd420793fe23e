// CopilotKit's v1 React chat (@copilotkit/react-core 1.74.0's <CopilotKit>, which renders the v2 provider, and
// @copilotkit/react-ui 1.74.0's CopilotChat) talking straight to Parley's CopilotKit endpoint, from another origin.
// ?runtimeUrl=…&thread=… choose the host and the conversation.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { CopilotKit } from '@copilotkit/react-core';
import { useCopilotKit } from '@copilotkit/react-core/v2';
import { CopilotChat } from '@copilotkit/react-ui';
import '@copilotkit/react-ui/styles.css';

const params = new URLSearchParams(location.search);

/** For the test: whether the core reached the runtime (typing before that would lose the message). */
function Ready() {
  window.parleyCopilotKit = useCopilotKit().copilotkit;
  return null;
}

createRoot(document.getElementById('root')).render(
  <CopilotKit runtimeUrl={params.get('runtimeUrl')} threadId={params.get('thread')} credentials="include">
    <Ready />
    <div style={{ height: '100vh' }}>
      <CopilotChat />
    </div>
  </CopilotKit>
);
