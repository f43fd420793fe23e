"""Approvals fail closed: a command Hermes flags never runs without a person's allow."""

import threading
import time

import run_agent
from tools import approval, terminal_tool

from tests.support import BridgeTestCase


class ApprovalsTest(BridgeTestCase):
    def setUp(self):
        super().setUp()
        self.victim = self.work / "victim"
        self.victim.mkdir()
        (self.victim / "keep.txt").write_text("precious")
        self.command = f"rm -rf {self.victim}"
        run_agent.SCRIPTS["clean"] = [{"tool": "terminal", "args": {"command": self.command}}, {"say": "done"}]

    def ran(self):
        return [c for _, c, _ in terminal_tool.COMMANDS_RUN if c == self.command]

    def ask(self, run_id="r1", thread="t1", **fields):
        stream = self.start_run("clean up", run_id=run_id, threadId=thread, **fields)
        return stream, stream.until("approval_request")

    def test_the_stand_in_runs_flagged_commands_silently_without_a_gateway_context(self):
        # What the Bridge guards against, as verified on Hermes v0.19: no context, no question, it runs.
        result = {}
        thread = threading.Thread(target=lambda: result.update(approval.check_all_command_guards(self.command)))
        thread.start()
        thread.join(5)
        self.assertTrue(result["approved"])

    def test_a_denied_command_never_runs(self):
        stream, request = self.ask()
        call = next(f for f in stream.frames if f["kind"] == "tool_call")
        self.assertEqual(request["toolCallId"], call["toolCallId"])
        self.assertEqual((request["toolName"], request["command"], request["description"]),
                         ("terminal", self.command, "recursive delete"))
        self.assertEqual(request["choices"], ["once", "session", "deny"])
        self.assertEqual(request["patternKeys"], ["recursive delete"])
        self.assertAlmostEqual(request["expiresAt"] / 1000, time.time() + 5, delta=2)
        status = self.call("GET", "/runs/r1")[1]
        self.assertEqual(status["status"], "waiting_for_approval")
        self.assertEqual(status["pendingApproval"]["approvalId"], request["approvalId"])
        time.sleep(0.3)
        self.assertEqual(self.ran(), [])  # it waits, it does not run
        answer = {"approvalId": request["approvalId"], "decision": "deny"}
        self.assertEqual(self.call("POST", "/runs/r1/approval", answer), (200, {"accepted": True, "replayed": False}))
        frames = self.finished(stream)
        resolved = next(f for f in frames if f["kind"] == "approval_resolved")
        self.assertEqual((resolved["outcome"], resolved["decision"]), ("answered", "deny"))
        result = next(f for f in frames if f["kind"] == "tool_result")
        self.assertTrue(result["isError"])
        self.assertIn("BLOCKED", result["result"])
        self.assertEqual(self.ran(), [])
        self.assertTrue((self.victim / "keep.txt").exists())
        self.assertEqual(frames[-1]["status"], "completed")

    def test_allowed_once_it_runs(self):
        stream, request = self.ask()
        self.call("POST", "/runs/r1/approval", {"approvalId": request["approvalId"], "decision": "once"})
        frames = self.finished(stream)
        self.assertFalse(next(f for f in frames if f["kind"] == "tool_result")["isError"])
        self.assertEqual(self.ran(), [self.command])
        self.assertFalse(self.victim.exists())

    def test_a_session_approval_holds_for_the_parley_thread_only(self):
        stream, request = self.ask()
        self.call("POST", "/runs/r1/approval", {"approvalId": request["approvalId"], "decision": "session"})
        session = self.finished(stream)[0]["hermesSessionId"]
        self.victim.mkdir()
        same = self.finished(self.start_run("clean up", run_id="r2", threadId="t1", sessionId=session))
        self.assertNotIn("approval_request", [f["kind"] for f in same])  # approved for this conversation
        self.assertEqual(len(self.ran()), 2)
        self.victim.mkdir()
        stream, other = self.ask(run_id="r3", thread="t2")  # another conversation is asked again
        self.call("POST", "/runs/r3/approval", {"approvalId": other["approvalId"], "decision": "deny"})
        self.finished(stream)
        self.assertEqual(len(self.ran()), 2)
        self.assertTrue(self.victim.exists())

    def test_an_unanswered_approval_expires_as_denied(self):
        self.start_bridge(approval_timeout=0.4)
        stream, request = self.ask()
        frames = self.finished(stream)
        resolved = next(f for f in frames if f["kind"] == "approval_resolved")
        self.assertEqual((resolved["outcome"], resolved["decision"]), ("expired", None))
        self.assertTrue(next(f for f in frames if f["kind"] == "tool_result")["isError"])
        self.assertEqual(self.ran(), [])
        late = self.call("POST", "/runs/r1/approval", {"approvalId": request["approvalId"], "decision": "once"})
        self.assertEqual((late[0], late[1]["error"]["code"]), (409, "APPROVAL_NOT_PENDING"))

    def test_the_client_can_expire_an_approval(self):
        stream, request = self.ask()
        expire = {"approvalId": request["approvalId"]}
        self.assertEqual(self.call("POST", "/runs/r1/approval/expire", expire)[1], {"accepted": True, "replayed": False})
        self.assertEqual(self.call("POST", "/runs/r1/approval/expire", expire)[1], {"accepted": True, "replayed": True})
        frames = self.finished(stream)
        self.assertEqual(next(f for f in frames if f["kind"] == "approval_resolved")["outcome"], "expired")
        self.assertEqual(self.ran(), [])

    def test_cancel_during_an_approval_denies_it(self):
        stream, request = self.ask()
        self.assertEqual(self.call("POST", "/runs/r1/cancel")[0], 202)
        frames = self.finished(stream)
        self.assertEqual([f["kind"] for f in frames][-2:], ["approval_resolved", "done"])
        self.assertEqual((frames[-2]["outcome"], frames[-1]["status"]), ("cancelled", "cancelled"))
        time.sleep(0.3)
        self.assertEqual(self.ran(), [])
        self.assertTrue(self.victim.exists())

    def test_a_client_that_cannot_answer_gets_a_denial_never_a_silent_run(self):
        frames = self.finished(self.start_run("clean up", clientCapabilities=[]))
        kinds = [f["kind"] for f in frames]
        self.assertNotIn("approval_request", kinds)
        warning = next(f for f in frames if f["kind"] == "status")
        self.assertEqual(warning["level"], "warn")
        self.assertIn("cannot answer approvals", warning["text"])
        self.assertTrue(next(f for f in frames if f["kind"] == "tool_result")["isError"])
        self.assertEqual(self.ran(), [])

    def test_decisions_are_checked_and_idempotent(self):
        stream, request = self.ask()
        aid = request["approvalId"]
        for decision, code in (("always", 400), ("maybe", 400)):
            status, body = self.call("POST", "/runs/r1/approval", {"approvalId": aid, "decision": decision})
            self.assertEqual((status, body["error"]["code"]), (code, "INVALID_REQUEST"))
        missing = self.call("POST", "/runs/r1/approval", {"approvalId": "a99", "decision": "deny"})
        self.assertEqual((missing[0], missing[1]["error"]["code"]), (404, "APPROVAL_NOT_FOUND"))
        self.call("POST", "/runs/r1/approval", {"approvalId": aid, "decision": "deny"})
        again = self.call("POST", "/runs/r1/approval", {"approvalId": aid, "decision": "deny"})
        self.assertEqual(again, (200, {"accepted": True, "replayed": True}))
        other = self.call("POST", "/runs/r1/approval", {"approvalId": aid, "decision": "once"})
        self.assertEqual((other[0], other[1]["error"]["code"]), (409, "APPROVAL_NOT_PENDING"))
        self.finished(stream)
        self.assertEqual(self.ran(), [])

    def test_always_is_offered_only_when_the_operator_allows_it(self):
        self.start_bridge(allow_always=True)
        stream, request = self.ask()
        self.assertEqual(request["choices"], ["once", "session", "always", "deny"])
        self.call("POST", "/runs/r1/approval", {"approvalId": request["approvalId"], "decision": "deny"})
        self.finished(stream)
