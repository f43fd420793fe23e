"""DELETE /threads/{threadId}: a deleted conversation leaves nothing a later one with the same id could inherit."""

import json
import tempfile
import threading
import types
import unittest
import time
from pathlib import Path
from urllib.parse import quote

import run_agent
from tools import approval, terminal_tool

from parley_bridge.errors import BridgeError
from parley_bridge.sessions import SessionPool
from tests.support import BridgeTestCase

LOOK = [{"tool": "terminal", "args": {"command": "ls -A; echo secret > notes.txt"}}, {"say": "noted"}]


class _Db:
    """Hermes' state db as far as the Bridge touches it: the session ids it was told to delete."""

    def __init__(self):
        self.deleted = []

    def delete_session(self, session_id, sessions_dir=None):
        self.deleted.append(session_id)
        return True


class ForgetThreadTest(BridgeTestCase):
    def setUp(self):
        super().setUp()
        self.victim = self.work / "victim"
        self.command = f"rm -rf {self.victim}"
        run_agent.SCRIPTS["look"] = LOOK
        run_agent.SCRIPTS["clean"] = [{"tool": "terminal", "args": {"command": self.command}}, {"say": "done"}]

    def look(self, run_id, thread, session=None):
        """A turn that lists its working directory, then leaves a file in it: (frames, listing, directory)."""
        frames = self.finished(self.start_run("look around", run_id=run_id, threadId=thread, sessionId=session))
        result = next(f for f in frames if f["kind"] == "tool_result")
        cwd = next(c for t, _, c in terminal_tool.COMMANDS_RUN if t == run_id)
        return frames, json.loads(result["result"])["output"], cwd

    def approve_for_the_conversation(self, run_id, thread, session):
        self.victim.mkdir(exist_ok=True)
        stream = self.start_run("clean up", run_id=run_id, threadId=thread, sessionId=session)
        request = stream.until("approval_request")
        self.call("POST", f"/runs/{run_id}/approval", {"approvalId": request["approvalId"], "decision": "session"})
        self.assertEqual(self.finished(stream)[-1]["status"], "completed")
        self.assertFalse(self.victim.exists())

    def forget(self, thread):
        status, body = self.call("DELETE", "/threads/" + quote(thread, safe=""))
        self.assertEqual((status, body), (204, {}))

    def test_a_deleted_thread_leaves_no_directory_approvals_runs_or_session(self):
        first, listing, workdir = self.look("r1", "t1")
        self.assertEqual(listing, "")
        session = first[-1]["hermesSessionId"]
        self.approve_for_the_conversation("r2", "t1", session)
        self.assertIn("thread:t1", approval._session_approved)
        other = self.look("o1", "t2")[2]  # another conversation, left alone

        self.forget("t1")

        self.assertFalse(Path(workdir).exists(), workdir)
        self.assertNotIn("thread:t1", approval._session_approved)
        for run_id in ("r1", "r2"):
            self.assertEqual(self.call("GET", f"/runs/{run_id}")[1]["error"]["code"], "RUN_NOT_FOUND")
        self.assertFalse(self.core.pool.knows(session))
        self.assertTrue(run_agent.AGENTS[0].closed)
        resumed = self.call("POST", "/run", {"runId": "r3", "threadId": "t1", "userMessage": "look again",
                                             "sessionId": session, "clientCapabilities": ["history"]})
        self.assertEqual((resumed[0], resumed[1]["error"]["code"]), (410, "SESSION_NOT_FOUND"))
        self.assertTrue(Path(other, "notes.txt").exists())
        self.assertEqual(self.call("GET", "/runs/o1")[0], 200)

        # A new conversation under the same id starts from nothing: an empty directory, no approvals.
        fresh, listing, again = self.look("n1", "t1")
        self.assertEqual((again, listing), (workdir, ""))
        self.assertFalse(fresh[0]["resumedSession"])
        self.victim.mkdir()
        stream = self.start_run("clean up", run_id="n2", threadId="t1", sessionId=fresh[-1]["hermesSessionId"])
        request = stream.until("approval_request")  # asked again, not approved "for this conversation"
        self.call("POST", "/runs/n2/approval", {"approvalId": request["approvalId"], "decision": "deny"})
        self.finished(stream)
        self.assertTrue(self.victim.exists())

    def test_deleting_a_thread_cancels_its_active_run(self):
        run_agent.SCRIPTS["ask"] = [{"tool": "terminal", "args": {"command": "echo x > left.txt"}},
                                    {"tool": "clarify", "args": {"question": "go on?"}}, {"say": "never"}]
        stream = self.start_run("ask", threadId="t1")
        stream.until("clarify_request")
        workdir = terminal_tool.COMMANDS_RUN[0][2]
        started = time.monotonic()
        self.forget("t1")
        self.assertLess(time.monotonic() - started, 3)
        frames = self.finished(stream)
        self.assertEqual([f["kind"] for f in frames][-2:], ["clarify_resolved", "done"])
        self.assertEqual(frames[-1]["status"], "cancelled")
        self.assertEqual(self.call("GET", "/runs/r1")[0], 404)
        self.wait_for(lambda: self.core.active_runs() == 0)
        self.assertFalse(Path(workdir).exists())
        self.assertEqual(self.look("r2", "t1")[1], "")  # the thread id is free again, and its directory empty

    def test_a_run_that_does_not_stop_keeps_the_thread_busy_and_is_erased_when_it_ends(self):
        self.start_bridge(cancel_grace=0.3)
        run_agent.SCRIPTS["hang"] = [{"tool": "terminal", "args": {"command": "echo x > left.txt"}},
                                     {"stubborn": 1.5}, {"say": "late"}]
        stream = self.start_run("hang", threadId="t1")
        stream.until("tool_result")
        workdir = terminal_tool.COMMANDS_RUN[0][2]
        deleting = threading.Thread(target=self.forget, args=("t1",))
        deleting.start()
        self.wait_for(lambda: self.call("GET", "/runs/r1")[0] == 404, what="the delete's start")
        during = self.call("POST", "/run", {"runId": "r2", "threadId": "t1", "userMessage": "look"})
        self.assertEqual((during[0], during[1]["error"]["code"]), (409, "SESSION_BUSY"))
        self.assertIn("being deleted", during[1]["error"]["message"])
        deleting.join(5)
        self.assertFalse(Path(workdir).exists())
        after = self.call("POST", "/run", {"runId": "r3", "threadId": "t1", "userMessage": "look"})
        self.assertEqual((after[0], after[1]["error"]["code"], after[1]["error"]["retryable"]),
                         (409, "SESSION_BUSY", True))  # the old agent still runs
        self.assertEqual(self.finished(stream)[-1]["status"], "cancelled")
        self.wait_for(lambda: self.core.active_runs() == 0)
        self.assertEqual(self.call("GET", "/runs/r1")[0], 404)  # not kept for re-attaching once it ended
        self.assertEqual(self.look("r4", "t1")[1], "")

    def test_deleting_is_idempotent_exact_and_token_checked(self):
        thread = "team/42 ü?x"
        first, _, workdir = self.look("r1", thread)
        other = self.look("r2", "team")[2]
        self.assertEqual(self.call("DELETE", "/threads/" + quote(thread, safe=""), token=None)[0], 401)
        self.assertTrue(Path(workdir).exists())
        self.forget(thread)
        self.forget(thread)
        self.forget("never-seen")
        self.assertFalse(Path(workdir).exists())
        self.assertTrue(Path(other).exists())
        self.assertEqual(self.call("DELETE", "/threads/%20")[1]["error"]["code"], "INVALID_REQUEST")
        self.assertEqual(self.call("DELETE", "/threads/a/b")[1]["error"]["code"], "NOT_FOUND")
        self.assertEqual(self.call("POST", "/threads/x", {})[1]["error"]["code"], "METHOD_NOT_ALLOWED")
        self.assertIn("forget-thread", self.call("GET", "/health")[1]["capabilities"])

    def test_hermes_state_db_rows_of_the_thread_are_deleted(self):
        run_agent.SCRIPTS["compress"] = [{"rotate": "hs-child"}, {"say": "compressed"}]
        frames = self.finished(self.start_run("compress", threadId="t1"))
        original = frames[0]["hermesSessionId"]
        db = _Db()
        run_agent.AGENTS[0]._session_db = db  # as Hermes does once its session_search tool opened the db
        self.forget("t1")
        self.assertEqual(sorted(db.deleted), sorted(["hs-child", original]))

    def test_a_hermes_that_cannot_forget_approvals_is_a_500_that_says_why(self):
        workdir = self.look("r1", "t1")[2]
        real = self.core.hermes.approval
        self.core.hermes.approval = types.SimpleNamespace()  # an older Hermes without clear_session
        self.addCleanup(setattr, self.core.hermes, "approval", real)
        status, body = self.call("DELETE", "/threads/t1")
        self.assertEqual((status, body["error"]["code"]), (500, "INTERNAL"))
        self.assertIn("lacks tools.approval.clear_session", self.log.getvalue())
        self.assertFalse(Path(workdir).exists())  # the rest is erased all the same


class HoldTest(unittest.TestCase):
    def test_two_deletes_of_one_thread_hold_it_until_both_are_done(self):
        pool = SessionPool(4, Path(tempfile.mkdtemp(prefix="pool-")), lambda session: None)
        pool.hold("thread:t1")
        pool.hold("thread:t1")
        pool.unhold("thread:t1")
        with self.assertRaises(BridgeError) as refused:
            pool.claim(None, "thread:t1", "r1", object(), create=True)
        self.assertEqual((refused.exception.status, refused.exception.code), (409, "SESSION_BUSY"))
        pool.unhold("thread:t1")
        session, resumed = pool.claim(None, "thread:t1", "r1", object(), create=True)
        self.assertEqual((session.scope_key, resumed), ("thread:t1", False))
