"""Web pages cannot drive the Bridge: Origin, Host and Content-Type rules, unguessable ids, the token before the body."""

import json
import socket
import unittest

import run_agent
from tools import terminal_tool

from parley_bridge.admission import is_json, is_loopback_host
from tests.support import TOKEN, BridgeTestCase

EVIL = "https://evil.example"
ATTACK = json.dumps({"runId": "evil", "threadId": "t1", "userMessage": "clean up",
                     "clientCapabilities": ["approvals"]}).encode()


class _Victim(BridgeTestCase):
    """A folder a flagged command would delete, and the script that tries."""

    def setUp(self):
        super().setUp()
        self.victim = self.work / "victim"
        self.victim.mkdir()
        (self.victim / "keep.txt").write_text("precious")
        self.command = f"rm -rf {self.victim}"
        run_agent.SCRIPTS["clean"] = [{"tool": "terminal", "args": {"command": self.command}}, {"say": "done"}]

    def ran(self):
        return [c for _, c, _ in terminal_tool.COMMANDS_RUN if c == self.command]

    def assert_refused(self, answer, status, code):
        self.assertEqual((answer[0], answer[1]["error"]["code"]), (status, code), answer)
        self.assertIsInstance(answer[1]["error"]["message"], str)
        self.assertFalse(answer[1]["error"]["retryable"])

    def assert_nothing_started(self):
        self.assertEqual(self.core.active_runs(), 0)
        self.assertEqual(run_agent.CALLS, [])
        self.assertEqual(self.call("GET", "/runs/evil")[0], 404)
        self.assertEqual(self.ran(), [])
        self.assertTrue((self.victim / "keep.txt").exists())


class WithoutTokenTest(_Victim):
    """The dangerous setting: no token, allowed on loopback. Web pages the developer opens must get nowhere."""
    config_overrides = {"token": None}

    def test_a_cross_site_text_plain_post_starts_no_run(self):
        # What a page on any site can send without a CORS preflight: a "simple" POST.
        attempts = (
            ({"Content-Type": "text/plain;charset=UTF-8", "Origin": EVIL}, 403, "ORIGIN_NOT_ALLOWED"),
            ({"Content-Type": "application/x-www-form-urlencoded", "Origin": EVIL}, 403, "ORIGIN_NOT_ALLOWED"),
            ({"Content-Type": "application/json", "Origin": "null"}, 403, "ORIGIN_NOT_ALLOWED"),  # sandboxed frame
            ({"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"),  # an Origin stripped on the way
            ({"Content-Type": "multipart/form-data; boundary=x"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
            ({"Content-Type": ""}, 415, "UNSUPPORTED_MEDIA_TYPE"),
        )
        for headers, status, code in attempts:
            with self.subTest(headers=headers):
                self.assert_refused(self.call("POST", "/run", raw=ATTACK, token=None, headers=headers), status, code)
        self.assert_nothing_started()
        self.assertIn("ORIGIN_NOT_ALLOWED", self.log.getvalue())  # the operator can see the attempts

    def test_a_cross_site_page_cannot_approve(self):
        stream = self.start_run("clean up")  # the developer's own client
        request = stream.until("approval_request")
        approval_id = request["approvalId"]
        decision = json.dumps({"approvalId": approval_id, "decision": "session"}).encode()
        for headers, status, code in (({"Content-Type": "text/plain", "Origin": EVIL}, 403, "ORIGIN_NOT_ALLOWED"),
                                      ({"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
                                      ({"Host": "evil.example:8642"}, 403, "HOST_NOT_ALLOWED")):
            with self.subTest(headers=headers):
                answer = self.call("POST", "/runs/r1/approval", raw=decision, token=None, headers=headers)
                self.assert_refused(answer, status, code)
        status = self.call("GET", "/runs/r1", token=None)[1]
        self.assertEqual(status["status"], "waiting_for_approval")  # still undecided
        # Blind guessing gets nowhere either: ids are random, not a1, a2 …
        self.assertNotRegex(approval_id, r"^a\d+$")
        self.assertGreaterEqual(len(approval_id), 20)
        for guess in ("a1", "a2", "c1"):
            answer = self.call("POST", "/runs/r1/approval", {"approvalId": guess, "decision": "once"}, token=None)
            self.assertEqual(answer[0], 404)
        self.call("POST", "/runs/r1/approval", {"approvalId": approval_id, "decision": "deny"}, token=None)
        self.finished(stream)
        self.assertEqual(self.ran(), [])
        self.assertTrue((self.victim / "keep.txt").exists())

    def test_a_rebound_host_name_is_refused(self):
        # DNS rebinding: evil.example now resolves to 127.0.0.1, and the page's requests are "same origin".
        for host in ("evil.example", "evil.example:8642", "127.0.0.1.evil.example", "localhost.evil.example",
                     "[::2]:8642", "0.0.0.0", ""):
            with self.subTest(host=host):
                for method, path, body in (("POST", "/run", ATTACK), ("GET", "/runs/evil", None),
                                           ("GET", "/health", None)):
                    answer = self.call(method, path, raw=body, token=None, headers={"Host": host})
                    self.assert_refused(answer, 403, "HOST_NOT_ALLOWED")
        self.assert_nothing_started()
        port = self.server.port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}", "127.0.0.2"):
            with self.subTest(host=host):
                self.assertEqual(self.call("GET", "/health", token=None, headers={"Host": host})[0], 200)

    def test_ids_of_a_run_are_random(self):
        run_agent.SCRIPTS["ask"] = [{"tool": "clarify", "args": {"question": "?"}}]
        streams = [self.start_run("ask", run_id=f"r{n}", threadId=f"t{n}") for n in (1, 2)]
        asks = [s.until("clarify_request")["clarifyId"] for s in streams]
        self.assertNotEqual(asks[0], asks[1])
        for clarify_id in asks:
            self.assertRegex(clarify_id, r"^c-[A-Za-z0-9_-]{20,}$")
        for n in (1, 2):
            self.call("POST", f"/runs/r{n}/cancel", token=None)
        for stream in streams:
            self.finished(stream)


class WithTokenTest(_Victim):
    def test_an_origin_is_refused_even_with_the_token(self):
        answer = self.call("POST", "/run", raw=ATTACK, headers={"Origin": "http://127.0.0.1:8080"})
        self.assert_refused(answer, 403, "ORIGIN_NOT_ALLOWED")
        self.assert_nothing_started()

    def test_with_a_token_any_host_name_is_served(self):
        # Behind a proxy or on another machine the Host is a real name; the token guards it.
        self.assertEqual(self.call("GET", "/health", headers={"Host": "bridge.internal.example"})[0], 200)
        answer = self.call("GET", "/runs/nope", headers={"Host": "bridge.internal.example:8642"})
        self.assertEqual(answer[1]["error"]["code"], "RUN_NOT_FOUND")

    def test_the_body_is_read_only_after_the_token_is_checked(self):
        # A wrong token announcing a large body gets its 401 at once: the Bridge does not wait for the body.
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=3) as connection:
            connection.sendall(b"POST /run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                               b"Authorization: Bearer wrong\r\nContent-Length: 5000000\r\n\r\n")
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                answer += chunk
        head = answer.split(b"\r\n\r\n")[0].decode()
        self.assertTrue(head.startswith("HTTP/1.1 401"), head)
        self.assertIn("Connection: close", head)  # the unread body cannot be taken for the next request

    def test_a_post_must_be_json_also_with_the_token(self):
        answer = self.call("POST", "/run", raw=ATTACK, headers={"Content-Type": "text/plain"})
        self.assert_refused(answer, 415, "UNSUPPORTED_MEDIA_TYPE")
        self.assertEqual(self.call("POST", "/run", raw=b"{}", headers={"Content-Length": "-1"})[0], 400)
        self.assert_nothing_started()


class AdmissionRulesTest(unittest.TestCase):
    def test_loopback_hosts(self):
        for host in ("localhost", "LocalHost:80", "127.0.0.1", "127.0.0.1:8642", "127.9.9.9", "[::1]", "[::1]:8642"):
            self.assertTrue(is_loopback_host(host), host)
        for host in (None, "", "evil.example", "localhost.", "localhost:x", "localhost:80:80", "::1", "[::1]x",
                     "[::1", "127.0.0.1.nip.io", "10.0.0.1", "0.0.0.0", "[::]", "2130706433", "127.1"):
            self.assertFalse(is_loopback_host(host), host)

    def test_json_content_types(self):
        for value in ("application/json", "application/json; charset=utf-8", " APPLICATION/JSON ;x=y"):
            self.assertTrue(is_json(value), value)
        for value in (None, "", "text/plain", "application/jsonp", "application/json-seq", "text/json"):
            self.assertFalse(is_json(value), value)


if __name__ == "__main__":
    unittest.main()
