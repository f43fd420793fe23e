// CopilotKit's v1 React chat (@copilotkit/react-core 1.74.0's <CopilotKit>, which renders the v2 provider, and
// @copilotkit/react-ui 1.74.0's CopilotChat) straight on a Parley host's CopilotKit endpoint. For apps still on
// the v1 API: the same endpoint serves both. ?runtimeUrl=… and ?thread=… as for the v2 page.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { CopilotKit, useLangGraphInterrupt } from '@copilotkit/react-core';
import { useCopilotKit } from '@copilotkit/react-core/v2';
import { CopilotChat } from '@copilotkit/react-ui';
import '@copilotkit/react-ui/styles.css';

const params = new URLSearchParams(location.search);
const runtimeUrl = params.get('runtimeUrl') ?? 'http://localhost:8080/api/chat/copilotkit';
let threadId = params.get('thread');
if (!threadId) {
  threadId = crypto.randomUUID();
  const url = new URL(location.href);
  url.searchParams.set('thread', threadId);
  history.replaceState(null, '', url);
}

/** Read by the browser test: whether the page reached the runtime (a message typed before that is lost). */
function Ready() {
  window.parleyCopilotKit = useCopilotKit().copilotkit;
  return null;
}

/** A pending question (Parley's clarify) with a button per choice; a choice answers it. */
function Question() {
  useLangGraphInterrupt({
    render: ({ event, resolve }) => (
      <div data-testid="parley-question">
        <p>{event.value?.message}</p>
        {(event.value?.responseSchema?.enum ?? []).map((choice) => (
          <button key={choice} data-choice={choice} onClick={() => resolve(choice)}>{choice}</button>
        ))}
      </div>
    ),
  });
  return null;
}

createRoot(document.getElementById('root')).render(
  <CopilotKit runtimeUrl={runtimeUrl} threadId={threadId} credentials="include">
    <Ready />
    <Question />
    <div style={{ height: '100vh' }}>
      <CopilotChat />
    </div>
  </CopilotKit>
);
