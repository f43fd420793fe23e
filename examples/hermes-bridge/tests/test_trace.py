"""The trace of the request that started a run: the Bridge logs the trace id of its W3C traceparent."""

from parley_bridge.server import trace_id
from tests.support import BridgeTestCase

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


class TraceTest(BridgeTestCase):
    def test_the_trace_id_of_a_run_request_is_logged(self):
        body = {"runId": "r1", "threadId": "t1", "sessionId": None, "userMessage": "hello",
                "clientCapabilities": ["approvals", "history"]}
        stream = self.open("POST", "/run", body, headers={"traceparent": f"00-{TRACE}-00f067aa0ba902b7-01"})
        self.finished(stream)
        self.assertIn(f"Run r1: trace {TRACE}", self.log.getvalue())

    def test_a_run_without_a_trace_logs_none(self):
        self.finished(self.start_run("hello"))
        self.assertNotIn("Run r1: trace", self.log.getvalue())

    def test_only_a_well_formed_traceparent_counts(self):
        self.assertEqual(trace_id(f"00-{TRACE}-00f067aa0ba902b7-01"), TRACE)
        self.assertIsNone(trace_id(None))
        self.assertIsNone(trace_id("00-" + "0" * 32 + "-00f067aa0ba902b7-01"))
        self.assertIsNone(trace_id(f"00-{TRACE.upper()}-00f067aa0ba902b7-01"))
        self.assertIsNone(trace_id("00-\nforged log line-00f067aa0ba902b7-01"))
