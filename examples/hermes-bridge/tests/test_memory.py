"""What the model is sent, turn after turn: the stand-in keeps a session's conversation as Hermes does.

Hermes' ``run_conversation`` sends the model its system prompt, then ``conversation_history`` plus the new
user message (repaired: consecutive user messages merged), and returns that list grown by the turn as
``result["messages"]``; the Bridge passes it back next turn. The tests assert the exact requests.
"""

import json
import os
import tempfile
from pathlib import Path

import run_agent

from tests.support import BridgeTestCase

SYSTEM = {"role": "system", "content": run_agent.SYSTEM_PROMPT}


def user(text):
    return {"role": "user", "content": text}


def answer(text):
    return {"role": "assistant", "content": text}


class ModelRequestsTest(BridgeTestCase):
    def turn(self, message, run_id, session=None, **fields):
        frames = self.finished(self.start_run(message, run_id=run_id, sessionId=session, **fields))
        self.assertEqual(frames[-1]["status"], "completed", frames)
        return frames[-1]["hermesSessionId"]

    def test_three_turns_send_the_model_the_conversation_once_each(self):
        log = Path(tempfile.mkdtemp(prefix="model-log-")) / "requests.jsonl"
        os.environ["HERMES_STANDIN_MODEL_LOG"] = str(log)
        self.addCleanup(os.environ.pop, "HERMES_STANDIN_MODEL_LOG", None)
        session = None
        for number in (1, 2, 3):
            session = self.turn(f"u{number}", f"r{number}", session)
        a1, a2 = answer("(stand-in) u1"), answer("(stand-in) u2")
        self.assertEqual([call["requests"] for call in run_agent.CALLS], [
            [[SYSTEM, user("u1")]],
            [[SYSTEM, user("u1"), a1, user("u2")]],
            [[SYSTEM, user("u1"), a1, user("u2"), a2, user("u3")]],
        ])
        self.assertEqual(run_agent.AGENTS[0]._session_messages, [user("u1"), a1, user("u2"), a2, user("u3"),
                                                                 answer("(stand-in) u3")])
        logged = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        self.assertEqual(logged, run_agent.REQUESTS)
        self.assertEqual([entry["task_id"] for entry in logged], ["r1", "r2", "r3"])

    def test_a_tool_step_is_a_second_request_and_stays_in_the_conversation(self):
        run_agent.SCRIPTS["look"] = [{"tool": "terminal", "args": {"command": "echo hi"}}, {"say": "saw hi"}]
        session = self.turn("look", "r1")
        self.turn("next", "r2", session)
        first, second = run_agent.CALLS[0]["requests"]
        self.assertEqual(first, [SYSTEM, user("look")])
        call, result = second[2], second[3]
        self.assertEqual((call["role"], call["tool_calls"][0]["function"]["name"]), ("assistant", "terminal"))
        self.assertEqual((result["role"], result["tool_call_id"]), ("tool", call["tool_calls"][0]["id"]))
        self.assertEqual(json.loads(result["content"])["output"], "hi\n")
        self.assertEqual(run_agent.CALLS[1]["requests"], [second + [answer("saw hi"), user("next")]])

    def test_regenerating_must_not_resume_the_session_that_holds_the_old_answer(self):
        session = self.turn("u1", "r1")
        session = self.turn("u2", "r2", session)
        a1, a2 = answer("(stand-in) u1"), answer("(stand-in) u2")
        # Resuming the session with the same question shows the model the old answer and the question twice …
        self.turn("u2", "r3", session)
        self.assertEqual(run_agent.CALLS[-1]["requests"][0], [SYSTEM, user("u1"), a1, user("u2"), a2, user("u2")])
        # … a regenerate is a new session built from the history before the question.
        history = [{"role": "user", "text": "u1"}, {"role": "assistant", "text": "(stand-in) u1"}]
        self.turn("u2", "r4", None, threadId="t2", history=history)
        self.assertEqual(run_agent.CALLS[-1]["requests"][0], [SYSTEM, user("u1"), a1, user("u2")])

    def test_a_cancelled_question_is_merged_into_the_next_as_hermes_repairs_it(self):
        run_agent.SCRIPTS["slow"] = [{"sleep": 5}, {"say": "never"}]
        session = self.turn("u1", "r1")
        stream = self.start_run("slow u2", run_id="r2", sessionId=session)
        self.wait_for(lambda: len(run_agent.CALLS) == 2, what="the second turn's start")
        self.call("POST", "/runs/r2/cancel")
        self.assertEqual(self.finished(stream)[-1]["status"], "cancelled")
        self.turn("u3", "r3", session)
        self.assertEqual(run_agent.CALLS[-1]["requests"][0],
                         [SYSTEM, user("u1"), answer("(stand-in) u1"), user("slow u2\n\nu3")])

    def test_the_skill_prompt_follows_hermes_own_system_prompt(self):
        self.turn("u1", "r1", systemPrompt="Answer in French.")
        system = run_agent.CALLS[0]["requests"][0][0]
        self.assertEqual(system, {"role": "system", "content": run_agent.SYSTEM_PROMPT + "\n\nAnswer in French."})
