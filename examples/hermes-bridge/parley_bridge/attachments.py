"""The files of ``POST /run`` (the attachments addition): checked, written to the conversation's working
directory, and handed to Hermes with the turn's message.

Every file is saved in the working directory under its own name (``report-1.pdf`` and so on when the name is
taken: nothing there is ever overwritten) and named in the message's text with its path, so that Hermes' file
and terminal tools can read it, on this turn and later ones. PNG, JPEG, GIF and WebP images also go to
``AIAgent.run_conversation`` as OpenAI ``image_url`` parts (data URLs) of the turn's message, so that a vision
model sees them; once the turn is over the Bridge keeps only the text naming them (:func:`text_only`), which is
what a session rebuilt from Parley's ``history`` holds too.
"""

from __future__ import annotations

import base64
import binascii
import errno
import logging
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import BridgeError, invalid

log = logging.getLogger("parley_bridge.attachments")

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The images sent to the model as ``image_url`` parts (what Hermes' own API server takes as images)."""

MAX_NAME_BYTES = 255
_MEDIA_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$")
_FORBIDDEN_IN_NAME = set('/\\<>:"|?*')


@dataclass(frozen=True)
class Attachment:
    """One file of the turn's message, decoded."""
    name: str
    media_type: str
    data: bytes

    @property
    def is_image(self) -> bool:
        return self.media_type in IMAGE_TYPES


@dataclass(frozen=True)
class Limits:
    """What this Bridge takes: media types (``family/*`` and ``*/*`` allowed), the decoded bytes of one
    request's files together, and how many files. No media types: the addition is off."""
    media_types: tuple[str, ...]
    max_bytes: int
    max_files: int

    @property
    def enabled(self) -> bool:
        return bool(self.media_types) and self.max_files > 0 and self.max_bytes > 0

    def accepts(self, media_type: str) -> bool:
        family = media_type.split("/", 1)[0]
        return any(t in (media_type, "*/*", family + "/*") for t in self.media_types)

    def body_allowance(self) -> int:
        """The bytes a request's files may add to its body: their Base64, and room for names and types."""
        return 4 * ((self.max_bytes + 2) // 3) + self.max_files * 1024 if self.enabled else 0

    def health(self) -> dict[str, Any]:
        """The ``attachments`` object of ``GET /health``."""
        return {"mediaTypes": list(self.media_types), "imageTypes": [t for t in IMAGE_TYPES if self.accepts(t)],
                "maxBytes": self.max_bytes, "maxFiles": self.max_files}


def parse(value: Any, limits: Limits) -> list[Attachment]:
    """The request's ``attachments``, checked and decoded; nothing is written here.

    Raises 400 INVALID_REQUEST naming the first bad file (a name with a path, a hidden or reserved name, a
    malformed media type or one this Bridge does not take, data that is not Base64) and 413 TOO_LARGE past
    the limits.
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid("attachments must be a list")
    if value and not limits.enabled:
        raise invalid("this Bridge takes no attachments (see GET /health)")
    if len(value) > limits.max_files:
        raise BridgeError(413, "TOO_LARGE", f"{len(value)} attachments; this Bridge takes at most {limits.max_files}"
                                            " per message")
    files: list[Attachment] = []
    for index, entry in enumerate(value):
        where = f"attachments[{index}]"
        if not isinstance(entry, dict):
            raise invalid(f"{where} must be an object with name, mediaType and data")
        name = check_name(entry.get("name"), where)
        media_type = entry.get("mediaType")
        if not isinstance(media_type, str) or not _MEDIA_TYPE.match(media_type):
            raise invalid(f"{where}.mediaType must be a lower-case media type such as application/pdf")
        if not limits.accepts(media_type):
            raise invalid(f"{where} ({name}) is {media_type}; this Bridge takes " + ", ".join(limits.media_types))
        data = entry.get("data")
        if not isinstance(data, str):
            raise invalid(f"{where}.data must be the file's bytes in Base64")
        try:
            content = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise invalid(f"{where}.data ({name}) is not valid Base64") from None
        size = entry.get("size")
        if size is not None and (isinstance(size, bool) or size != len(content)):
            raise invalid(f"{where} ({name}) says size {size} but its data holds {len(content)} bytes")
        files.append(Attachment(name, media_type, content))
    if sum(len(f.data) for f in files) > limits.max_bytes:
        raise BridgeError(413, "TOO_LARGE", f"the attachments hold more than {limits.max_bytes} bytes, this Bridge's"
                                            " limit per message")
    return files


def check_name(name: Any, where: str = "name") -> str:
    """A file name safe to create in the working directory as it is, or 400 INVALID_REQUEST.

    Refused (never repaired, so the agent is told the name the person gave): a path (``/`` or ``\\``), control
    or format characters, ``<>:"|?*``, a leading or trailing dot or space (hidden files, ``.``, ``..``), a name
    that is not NFC-normalised, more than 255 bytes in UTF-8.
    """
    if not isinstance(name, str) or not name:
        raise invalid(f"{where}.name must be a non-blank string")
    shown = name[:80].encode("unicode_escape").decode("ascii")
    if any(c in _FORBIDDEN_IN_NAME or unicodedata.category(c) in ("Cc", "Cf") for c in name):
        raise invalid(f"{where}.name '{shown}' holds a path separator, a control character or one of <>:\"|?*")
    if name[0] in ". " or name[-1] in ". " or name.strip() != name:
        raise invalid(f"{where}.name '{shown}' starts or ends with a dot or a space")
    if unicodedata.normalize("NFC", name) != name or len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise invalid(f"{where}.name '{shown}' is not NFC-normalised or longer than {MAX_NAME_BYTES} bytes")
    return name


def save(files: list[Attachment], workdir: Path) -> list[Path]:
    """Writes each file into ``workdir`` under a name nothing there has (``name``, ``name-1.ext``, …).

    Creation is exclusive and follows no symbolic link, so an existing file is never overwritten nor a link
    followed out of the directory. On failure the files written so far are removed and OSError is raised.
    """
    written: list[Path] = []
    try:
        for file in files:
            written.append(_write_new(workdir, file))
    except OSError:
        for path in written:
            try:
                path.unlink()
            except OSError:
                log.warning("Could not remove %s after a failed save", path)
        raise
    return written


def _write_new(workdir: Path, file: Attachment) -> Path:
    stem, dot, extension = file.name.rpartition(".")
    if not dot or not stem:
        stem, extension = file.name, ""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for n in range(0, 1000):
        candidate = file.name if n == 0 else f"{stem}-{n}" + (f".{extension}" if extension else "")
        path = workdir / candidate
        try:
            fd = os.open(path, flags, 0o644)
        except FileExistsError:
            continue
        except OSError as error:
            if error.errno == errno.ENAMETOOLONG:
                stem = stem[: max(1, len(stem) // 2)]
                continue
            raise
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(file.data)
        except OSError:
            path.unlink(missing_ok=True)
            raise
        return path
    raise FileExistsError(errno.EEXIST, "no free name for " + file.name[:80] + " in the working directory")


def mention(file: Attachment, path: Path) -> str:
    """How the message's text names a file: ``[file: report.pdf (application/pdf, 1234 bytes), saved as …]``."""
    kind = "image" if file.media_type.startswith("image/") else "file"
    return f"[{kind}: {file.name} ({file.media_type}, {len(file.data)} bytes), saved as {path}]"


def user_message(text: str, files: list[Attachment], paths: list[Path]) -> str | list[dict[str, Any]]:
    """What ``run_conversation`` gets: the text and a line naming each file; with images, OpenAI chat parts —
    that text, then an ``image_url`` part (a data URL) per image, in the order they were attached."""
    if not files:
        return text
    named = text + "\n\n" + "\n".join(mention(f, p) for f, p in zip(files, paths))
    images = [f for f in files if f.is_image]
    if not images:
        return named
    parts: list[dict[str, Any]] = [{"type": "text", "text": named}]
    for image in images:
        url = f"data:{image.media_type};base64," + base64.b64encode(image.data).decode("ascii")
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def text_only(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with each user message's parts list reduced to its text (which names its images), so
    that a session carries no image bytes into later turns."""
    cleaned = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and message.get("role") == "user":
            text = "\n".join(str(p.get("text") or "") for p in content
                             if isinstance(p, dict) and p.get("type") in ("text", "input_text"))
            message = dict(message, content=text)
        cleaned.append(message)
    return cleaned
