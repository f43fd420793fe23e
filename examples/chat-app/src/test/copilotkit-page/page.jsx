// CopilotKit's stock React chat (@copilotkit/react-core 1.74.0, the v2 CopilotKitProvider and CopilotChat) talking
// straight to Parley's CopilotKit endpoint, with no Node runtime in between. The page is served from another
// origin than the host, so it also goes through CORS with credentials. ?runtimeUrl=…&thread=… choose the host
// and the conversation.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { CopilotKitProvider, CopilotChat } from '@copilotkit/react-core/v2';
import '@copilotkit/react-core/v2/styles.css';

const params = new URLSearchParams(location.search);

createRoot(document.getElementById('root')).render(
  <CopilotKitProvider runtimeUrl={params.get('runtimeUrl')} credentials="include">
    <div style={{ height: '100vh' }}>
      <CopilotChat threadId={params.get('thread')} />
    </div>
  </CopilotKitProvider>
);
