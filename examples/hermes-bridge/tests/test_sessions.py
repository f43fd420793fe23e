"""Sessions: memory over turns, a restart rebuilt from Parley's history, busy sessions, LRU, parallel runs."""

import json

import run_agent

from tests.support import BridgeTestCase

RECALL = [{"tool": "terminal", "args": {"command": "echo noted"}}, {"recall": True}]


class SessionsTest(BridgeTestCase):
    def setUp(self):
        super().setUp()
        run_agent.SCRIPTS["turn"] = RECALL

    def turn(self, number, session, **fields):
        frames = self.finished(self.start_run(f"turn {number}", run_id=f"r{number}", sessionId=session, **fields))
        self.assertEqual(frames[-1]["status"], "completed", frames)
        return frames

    def test_three_turns_give_the_model_one_two_three_user_turns(self):
        session = None
        for number in (1, 2, 3):
            frames = self.turn(number, session)
            self.assertEqual(frames[0]["resumedSession"], number > 1)
            session = frames[-1]["hermesSessionId"]
            self.assertTrue(frames[-2]["text"].startswith(f"I see {number} user turns"))
        self.assertEqual([len(c["user_turns"]) for c in run_agent.CALLS], [1, 2, 3])
        self.assertEqual(run_agent.CALLS[2]["user_turns"], ["turn 1", "turn 2", "turn 3"])
        self.assertEqual(len(run_agent.AGENTS), 1)  # one agent per session, reused

    def test_a_restarted_bridge_asks_for_the_history_and_loses_nothing(self):
        first = self.turn(1, None)
        second = self.turn(2, first[-1]["hermesSessionId"])
        self.start_bridge()  # a restart: no sessions, no runs
        status, body = self.call("POST", "/run", {"runId": "r3", "threadId": "t1", "userMessage": "turn 3",
                                                  "sessionId": second[-1]["hermesSessionId"],
                                                  "clientCapabilities": ["approvals", "history"]})
        self.assertEqual((status, body["error"]["code"]), (410, "SESSION_NOT_FOUND"))
        history = []
        for number, frames in ((1, first), (2, second)):
            history.append({"role": "user", "text": f"turn {number}"})
            history.append({"role": "assistant", "text": frames[-2]["text"]})
            call = next(f for f in frames if f["kind"] == "tool_call")
            result = next(f for f in frames if f["kind"] == "tool_result")
            history.append({"role": "tool_call", "toolCallId": call["toolCallId"], "toolName": "terminal",
                            "args": json.dumps(call["args"])})
            history.append({"role": "tool_result", "toolCallId": call["toolCallId"], "toolName": "terminal",
                            "result": result["result"], "isError": False})
        third = self.turn(3, None, history=history)
        self.assertEqual(third[0]["historyEntries"], 8)
        self.assertTrue(third[-2]["text"].startswith("I see 3 user turns: turn 1 | turn 2 | turn 3"))
        given = run_agent.CALLS[-1]["messages"]
        self.assertEqual([m["role"] for m in given[:4]], ["user", "assistant", "tool", "assistant"])
        self.assertEqual(given[1]["tool_calls"][0]["function"]["arguments"], '{"command": "echo noted"}')

    def test_a_client_without_history_gets_a_fresh_session_from_a_lenient_bridge(self):
        frames = self.turn(1, "hs-forgotten", clientCapabilities=["approvals"])
        self.assertFalse(frames[0]["resumedSession"])
        self.assertEqual(frames[0]["hermesSessionId"], "hs-forgotten")
        self.assertTrue(frames[-2]["text"].startswith("I see 1 user turns"))

    def test_a_strict_bridge_answers_410_to_every_client(self):
        self.start_bridge(strict_sessions=True)
        status, body = self.call("POST", "/run", {"runId": "r1", "userMessage": "x", "sessionId": "hs-gone"})
        self.assertEqual((status, body["error"]["code"]), (410, "SESSION_NOT_FOUND"))

    def test_a_second_run_of_a_busy_session_or_conversation_is_session_busy(self):
        run_agent.SCRIPTS["ask"] = [{"tool": "clarify", "args": {"question": "?"}}]
        stream = self.start_run("ask")
        session = stream.until("clarify_request") and stream.frames[0]["hermesSessionId"]
        for body in ({"runId": "r2", "userMessage": "again", "sessionId": session},
                     {"runId": "r3", "userMessage": "again", "threadId": "t1"}):
            status, answer = self.call("POST", "/run", body)
            self.assertEqual((status, answer["error"]["code"], answer["error"]["retryable"]),
                             (409, "SESSION_BUSY", True))
        self.call("POST", "/runs/r1/cancel")
        self.finished(stream)
        self.turn(4, session)  # free again

    def test_sessions_are_bounded_least_recently_used_first(self):
        self.start_bridge(max_sessions=2)
        sessions = [self.turn(n, None, threadId=f"t{n}")[-1]["hermesSessionId"] for n in (1, 2, 3)]
        self.assertTrue(run_agent.AGENTS[0].closed)
        self.assertFalse(run_agent.AGENTS[2].closed)
        status, body = self.call("POST", "/run", {"runId": "r9", "userMessage": "x", "sessionId": sessions[0],
                                                  "clientCapabilities": ["history"]})
        self.assertEqual(status, 410)
        self.assertTrue(self.turn(5, sessions[2], threadId="t3")[0]["resumedSession"])

    def test_runs_of_different_sessions_run_in_parallel_each_in_its_own_directory(self):
        run_agent.SCRIPTS["where"] = [{"tool": "terminal", "args": {"command": "pwd"}},
                                      {"tool": "clarify", "args": {"question": "go on?"}}, {"say": "ok"}]
        streams = [self.start_run("where am i", run_id=f"r{n}", threadId=f"t{n}") for n in (1, 2)]
        asks = [s.until("clarify_request") for s in streams]  # both wait at once: two threads
        self.assertEqual(self.call("GET", "/health")[1]["activeRuns"], 2)
        folders = []
        for n, (stream, ask) in enumerate(zip(streams, asks), start=1):
            result = next(f for f in stream.frames if f["kind"] == "tool_result")
            folders.append(json.loads(result["result"])["output"].strip())
            self.call("POST", f"/runs/r{n}/clarify", {"clarifyId": ask["clarifyId"], "answer": "yes"})
            self.assertEqual(self.finished(stream)[-1]["status"], "completed")
        self.assertNotEqual(folders[0], folders[1])
        for folder in folders:
            self.assertTrue(folder.startswith(str(self.work / "work")), folder)

    def test_a_rotated_session_is_reported_and_goes_on_under_its_new_id(self):
        run_agent.SCRIPTS["compress"] = [{"rotate": "hs-child"}, {"tool": "terminal", "args": {"command": "true"}},
                                         {"say": "compressed"}]
        frames = self.finished(self.start_run("compress"))
        rotated = next(f for f in frames if f["kind"] == "session_rotated")
        self.assertEqual((rotated["hermesSessionId"], rotated["previousHermesSessionId"]),
                         ("hs-child", frames[0]["hermesSessionId"]))
        self.assertEqual(frames[-1]["hermesSessionId"], "hs-child")
        next_turn = self.turn(2, "hs-child")
        self.assertTrue(next_turn[0]["resumedSession"])
        self.assertTrue(next_turn[-2]["text"].startswith("I see 2 user turns"))

    def test_another_model_rebuilds_the_agent_and_keeps_the_conversation(self):
        first = self.turn(1, None, modelConfig={"model": "model-a"})
        second = self.turn(2, first[-1]["hermesSessionId"], modelConfig={"model": "model-b"})
        self.assertEqual([a.model for a in run_agent.AGENTS], ["model-a", "model-b"])
        self.assertTrue(run_agent.AGENTS[0].closed)
        self.assertTrue(second[-2]["text"].startswith("I see 2 user turns"))
        usage = next(f for f in second if f["kind"] == "usage")
        self.assertEqual(usage["outputTokens"], 5)  # a new agent's counters start again
