"""The attachments addition: a message's files saved in the conversation's working directory and named in its
text, images also as image parts; bad or oversized files refused before anything is written."""

import base64
import errno
import os
from pathlib import Path
from unittest import mock
from urllib.parse import quote

import run_agent

from parley_bridge import attachments
from parley_bridge.core import thread_scope
from tests.support import BridgeTestCase

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PDF = b"%PDF-1.7\n" + b"stand-in pdf body\n" * 20


def file(name, media_type, data):
    return {"name": name, "mediaType": media_type, "data": base64.b64encode(data).decode("ascii")}


class AttachmentsTest(BridgeTestCase):
    def setUp(self):
        super().setUp()
        run_agent.SCRIPTS["look at"] = [{"say": "Seen."}]
        run_agent.SCRIPTS["recall"] = [{"recall": True}]

    def workdir(self, thread="t1"):
        return self.core.pool.workdir_for(thread_scope(thread))

    def last_user_content(self, run_id):
        request = [r for r in run_agent.REQUESTS if r["task_id"] == run_id][-1]
        return [m for m in request["messages"] if m["role"] == "user"][-1]["content"]

    def assert_refused(self, answer, status, code, *words):
        self.assertEqual(answer[0], status, answer)
        self.assertEqual(answer[1]["error"]["code"], code, answer)
        for word in words:
            self.assertIn(word, answer[1]["error"]["message"])

    def test_health_says_which_files_it_takes(self):
        status, body = self.call("GET", "/health", token=None)
        self.assertEqual(status, 200)
        self.assertIn("attachments", body["capabilities"])
        self.assertEqual(body["attachments"], {"mediaTypes": ["*/*"], "maxBytes": 25 * 1024 * 1024, "maxFiles": 10,
                                               "imageTypes": ["image/png", "image/jpeg", "image/gif", "image/webp"]})

    def test_a_bridge_with_attachments_off_says_nothing_of_them_and_refuses_them(self):
        self.start_bridge(attachment_types=[])
        body = self.call("GET", "/health", token=None)[1]
        self.assertNotIn("attachments", body["capabilities"])
        self.assertNotIn("attachments", body)
        answer = self.call("POST", "/run", {"runId": "r1", "userMessage": "look at this",
                                            "attachments": [file("a.txt", "text/plain", b"x")]})
        self.assert_refused(answer, 400, "INVALID_REQUEST", "takes no attachments")

    def test_an_image_goes_to_the_model_as_a_part_and_every_file_is_saved_and_named(self):
        frames = self.finished(self.start_run("look at these", attachments=[
            file("cat.png", "image/png", PNG), file("report.pdf", "application/pdf", PDF)]))

        self.assertEqual(frames[-1]["status"], "completed")
        workdir = self.workdir()
        self.assertEqual((workdir / "cat.png").read_bytes(), PNG)
        self.assertEqual((workdir / "report.pdf").read_bytes(), PDF)
        content = self.last_user_content("r1")
        self.assertIsInstance(content, list)
        self.assertEqual([p["type"] for p in content], ["text", "image_url"])
        self.assertEqual(content[1]["image_url"]["url"], "data:image/png;base64," + base64.b64encode(PNG).decode())
        self.assertEqual(content[0]["text"], "look at these\n\n"
                         f"[image: cat.png (image/png, {len(PNG)} bytes), saved as {workdir / 'cat.png'}]\n"
                         f"[file: report.pdf (application/pdf, {len(PDF)} bytes), saved as {workdir / 'report.pdf'}]")
        self.assertNotIn(base64.b64encode(PNG).decode()[:40], self.log.getvalue())

    def test_a_file_without_images_is_named_in_plain_text(self):
        self.finished(self.start_run("look at the notes", attachments=[file("notes.txt", "text/plain", b"hi")]))
        self.assertEqual(self.last_user_content("r1"),
                         f"look at the notes\n\n[file: notes.txt (text/plain, 2 bytes), saved as "
                         f"{self.workdir() / 'notes.txt'}]")

    def test_an_existing_file_is_never_overwritten(self):
        workdir = self.workdir()
        workdir.mkdir(parents=True)
        (workdir / "report.pdf").write_bytes(b"the agent's own report")
        (workdir / "report-1.pdf").write_bytes(b"another")

        self.finished(self.start_run("look at it", attachments=[file("report.pdf", "application/pdf", PDF)]))

        self.assertEqual((workdir / "report.pdf").read_bytes(), b"the agent's own report")
        self.assertEqual((workdir / "report-1.pdf").read_bytes(), b"another")
        self.assertEqual((workdir / "report-2.pdf").read_bytes(), PDF)
        self.assertIn(f"saved as {workdir / 'report-2.pdf'}]", self.last_user_content("r1"))

    def test_a_symbolic_link_in_the_way_is_not_followed(self):
        workdir = self.workdir()
        workdir.mkdir(parents=True)
        outside = self.work / "outside.txt"
        (workdir / "notes.txt").symlink_to(outside)

        self.finished(self.start_run("look at it", attachments=[file("notes.txt", "text/plain", b"mine")]))

        self.assertFalse(outside.exists())
        self.assertEqual((workdir / "notes-1.txt").read_bytes(), b"mine")

    def test_later_turns_name_the_image_but_carry_no_bytes(self):
        first = self.finished(self.start_run("look at this", attachments=[file("cat.png", "image/png", PNG)]))
        self.finished(self.start_run("recall it", run_id="r2", sessionId=first[-1]["hermesSessionId"]))

        request = [r for r in run_agent.REQUESTS if r["task_id"] == "r2"][-1]
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        self.assertEqual(users, [f"look at this\n\n[image: cat.png (image/png, {len(PNG)} bytes), saved as "
                                 f"{self.workdir() / 'cat.png'}]", "recall it"])

    def test_bad_files_are_refused_and_nothing_is_written(self):
        good = file("ok.txt", "text/plain", b"fine")
        bad = {
            "../../etc/passwd": [good, file("../../etc/passwd", "text/plain", b"root:x:0:0")],
            "a path": [file("sub/notes.txt", "text/plain", b"x")],
            "a backslash": [file("..\\notes.txt", "text/plain", b"x")],
            "dot dot": [file("..", "text/plain", b"x")],
            "hidden": [file(".bashrc", "text/plain", b"x")],
            "control": [file("a\nb.txt", "text/plain", b"x")],
            "blank": [file("", "text/plain", b"x")],
            "type": [file("a.txt", "text", b"x")],
            "base64": [{"name": "a.txt", "mediaType": "text/plain", "data": "not base64!"}],
            "size": [dict(file("a.txt", "text/plain", b"abc"), size=4)],
            "shape": ["a.txt"],
        }
        for what, files in bad.items():
            with self.subTest(what):
                answer = self.call("POST", "/run", {"runId": "r-" + what, "threadId": "t1", "userMessage": "look at",
                                                    "attachments": files})
                self.assert_refused(answer, 400, "INVALID_REQUEST", "attachments[")
        self.assert_refused(self.call("POST", "/run", {"runId": "x", "userMessage": "m", "attachments": [
            file("../../etc/passwd", "text/plain", b"x")]}), 400, "INVALID_REQUEST", "../../etc/passwd")
        self.assertFalse(self.workdir().exists())
        self.assertEqual(self.core.active_runs(), 0)
        self.assertEqual(run_agent.REQUESTS, [])

    def test_files_past_the_limits_are_413_and_nothing_is_written(self):
        self.start_bridge(max_attachment_bytes=1000, max_attachments=2, attachment_types=["image/*", "text/plain"])
        big = self.call("POST", "/run", {"runId": "r1", "threadId": "t1", "userMessage": "look at", "attachments": [
            file("a.txt", "text/plain", b"a" * 600), file("b.txt", "text/plain", b"b" * 600)]})
        self.assert_refused(big, 413, "TOO_LARGE", "1000 bytes")
        many = self.call("POST", "/run", {"runId": "r2", "threadId": "t1", "userMessage": "look at", "attachments": [
            file(f"{n}.txt", "text/plain", b"x") for n in range(3)]})
        self.assert_refused(many, 413, "TOO_LARGE", "at most 2")
        huge = self.call("POST", "/run", {"runId": "r3", "threadId": "t1", "userMessage": "look at", "attachments": [
            file("a.txt", "text/plain", b"a" * 3_000_000)]})
        self.assertEqual(huge[0], 413)
        pdf = self.call("POST", "/run", {"runId": "r4", "threadId": "t1", "userMessage": "look at", "attachments": [
            file("r.pdf", "application/pdf", PDF)]})
        self.assert_refused(pdf, 400, "INVALID_REQUEST", "application/pdf", "image/*, text/plain")
        self.assertFalse(self.workdir().exists())
        self.assertEqual(self.core.active_runs(), 0)

    def test_a_file_that_cannot_be_saved_fails_the_run_and_leaves_no_part_behind(self):
        real = attachments._write_new

        def full_disk(workdir, attached):
            if attached.name == "b.txt":
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(workdir, attached)

        with mock.patch.object(attachments, "_write_new", full_disk):
            frames = self.finished(self.start_run("look at", attachments=[
                file("a.txt", "text/plain", b"x"), file("b.txt", "text/plain", b"y")]))
        self.assertEqual([(f["code"], "No space left" in f["message"]) for f in frames if f["kind"] == "error"],
                         [("ATTACHMENTS_FAILED", True)])
        self.assertEqual(frames[-1]["status"], "failed")
        self.assertEqual(list(self.workdir().iterdir()), [])
        self.assertEqual(run_agent.REQUESTS, [])

    def test_deleting_the_thread_removes_its_files(self):
        self.finished(self.start_run("look at this", attachments=[file("report.pdf", "application/pdf", PDF)]))
        saved = self.workdir() / "report.pdf"
        self.assertTrue(saved.exists())

        self.assertEqual(self.call("DELETE", "/threads/" + quote("t1", safe=""))[0], 204)

        self.assertFalse(saved.exists())
        self.assertFalse(Path(self.workdir()).exists())
