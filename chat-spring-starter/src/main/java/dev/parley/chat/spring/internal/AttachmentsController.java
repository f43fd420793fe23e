package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentLimits;
import dev.parley.chat.engine.ChatAttachments;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.spring.OwnerResolver;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.Part;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ContentDisposition;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.multipart.MaxUploadSizeExceededException;

/**
 * Files and images sent with messages, under {@code parley.web.base-path}:
 * <ul>
 *   <li>{@code POST /sessions/{id}/attachments}: uploads one file, either as the raw body (its type in
 *       {@code Content-Type}, its name in {@code ?name=}; streamed, limits enforced as it arrives) or as
 *       {@code multipart/form-data} with one part named {@code file} (parsed by the servlet container first,
 *       within its own multipart limits). {@code 201} with the attachment; send its id with the message
 *       ({@code "attachments": [id]}).</li>
 *   <li>{@code GET /attachment-limits}: what may be attached here ({@code acceptedTypes}: allowed by the limits
 *       and taken by the runtime, empty for nothing) and the size limits, for a page's attach button.</li>
 *   <li>{@code GET /attachments/{id}}: its bytes, with its type, a {@code Content-Disposition} (inline only
 *       for images, audio, video and plain text; never for HTML or SVG), {@code X-Content-Type-Options:
 *       nosniff}, a sandboxing {@code Content-Security-Policy}, and single byte ranges ({@code 206}).</li>
 * </ul>
 * Another owner's thread or attachment is {@code 404}.
 */
@RestController
@RequestMapping("${parley.web.base-path:/api/chat}")
public class AttachmentsController extends ParleyEndpoints {
    private static final int COPY_BUFFER = 64 * 1024;

    private final ChatEngine engine;

    public AttachmentsController(ChatEngine engine, OwnerResolver owners, OriginCheck origins) {
        super(owners, origins);
        this.engine = engine;
    }

    @PostMapping("/sessions/{id}/attachments")
    public ResponseEntity<byte[]> upload(HttpServletRequest request, @PathVariable("id") String threadId,
            @RequestParam(name = "name", required = false) @Nullable String name) throws IOException {
        String owner = ownerOfUpload(request);
        ChatAttachments attachments = engine.attachments();
        String type = request.getContentType();
        if (type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("multipart/form-data")) {
            Part file = onePart(request);
            try (InputStream in = file.getInputStream()) {
                return created(attachments.upload(owner, threadId, file.getSubmittedFileName(),
                        file.getContentType(), in));
            }
        }
        long declared = request.getContentLengthLong();
        if (declared > attachments.limits().maxFileBytes()) {
            throw new ChatException(dev.parley.chat.ErrorCode.TOO_LARGE, "the attachment is larger than "
                    + attachments.limits().maxFileBytes() + " bytes per file");
        }
        try (InputStream in = request.getInputStream()) {
            return created(attachments.upload(owner, threadId, name, type, in));
        }
    }

    @GetMapping("/attachment-limits")
    public ResponseEntity<byte[]> limits(HttpServletRequest request) {
        owner(request);
        ChatAttachments attachments = engine.attachments();
        AttachmentLimits limits = attachments.limits();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("acceptedTypes", attachments.acceptedTypes());
        body.put("maxFileBytes", limits.maxFileBytes());
        body.put("maxFilesPerMessage", limits.maxFilesPerMessage());
        body.put("maxBytesPerMessage", limits.maxBytesPerMessage());
        body.put("maxBytesPerOwner", limits.maxBytesPerOwner());
        return JsonBodies.json(HttpStatus.OK, body);
    }

    @GetMapping("/attachments/{id}")
    public void download(HttpServletRequest request, HttpServletResponse response, @PathVariable("id") String id,
            @RequestParam(name = "download", required = false) @Nullable String download) throws IOException {
        String owner = owner(request);
        Attachment attachment = engine.attachments().find(owner, id);
        long size = attachment.size();
        ByteRange range = ByteRange.parse(request.getHeader(HttpHeaders.RANGE), size);
        String etag = "\"" + attachment.sha256() + "\"";
        String ifRange = request.getHeader(HttpHeaders.IF_RANGE);
        if (ifRange != null && !ifRange.equals(etag)) {
            range = ByteRange.WHOLE;
        }
        response.setHeader(HttpHeaders.ACCEPT_RANGES, "bytes");
        response.setHeader(HttpHeaders.ETAG, etag);
        response.setHeader("X-Content-Type-Options", "nosniff");
        response.setHeader("Content-Security-Policy", "default-src 'none'; sandbox");
        response.setHeader(HttpHeaders.CACHE_CONTROL, "private, max-age=3600");
        boolean inline = download == null && showsInline(attachment.mediaType());
        response.setHeader(HttpHeaders.CONTENT_DISPOSITION,
                (inline ? ContentDisposition.inline() : ContentDisposition.attachment())
                        .filename(attachment.name(), java.nio.charset.StandardCharsets.UTF_8).build().toString());
        if (etag.equals(request.getHeader(HttpHeaders.IF_NONE_MATCH))) {
            response.setStatus(HttpStatus.NOT_MODIFIED.value());
            return;
        }
        if (range == ByteRange.UNSATISFIABLE) {
            response.setStatus(HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE.value());
            response.setHeader(HttpHeaders.CONTENT_RANGE, "bytes */" + size);
            return;
        }
        long start = range == ByteRange.WHOLE ? 0 : range.start();
        long length = range == ByteRange.WHOLE ? size : range.end() - range.start() + 1;
        response.setContentType(servedType(attachment.mediaType()));
        response.setContentLengthLong(length);
        if (range != ByteRange.WHOLE) {
            response.setStatus(HttpStatus.PARTIAL_CONTENT.value());
            response.setHeader(HttpHeaders.CONTENT_RANGE, "bytes " + range.start() + "-" + range.end() + "/" + size);
        }
        try (InputStream in = engine.attachments().open(owner, id, start)) {
            copy(in, response.getOutputStream(), length);
        }
    }

    @ExceptionHandler(MaxUploadSizeExceededException.class)
    public ResponseEntity<byte[]> multipartTooLarge(MaxUploadSizeExceededException e, HttpServletRequest request) {
        return Problems.of(HttpStatus.PAYLOAD_TOO_LARGE, "TOO_LARGE", "the upload is larger than the servlet"
                + " container's multipart limit (spring.servlet.multipart.max-file-size); send the file as the raw"
                + " request body instead", request.getRequestURI());
    }

    /** Images (but SVG), audio, video and plain text are shown by browsers without running anything. */
    static boolean showsInline(String mediaType) {
        return mediaType.startsWith("image/") && !mediaType.equals("image/svg+xml") || mediaType.startsWith("audio/")
                || mediaType.startsWith("video/") || mediaType.equals("text/plain");
    }

    /** The type sent: text gets its charset; HTML and SVG, should a host allow them, go as plain bytes. */
    static String servedType(String mediaType) {
        if (mediaType.equals("text/html") || mediaType.equals("image/svg+xml") || mediaType.contains("xml")
                || mediaType.contains("javascript")) {
            return MediaType.APPLICATION_OCTET_STREAM_VALUE;
        }
        return mediaType.startsWith("text/") ? mediaType + ";charset=UTF-8" : mediaType;
    }

    private static Part onePart(HttpServletRequest request) throws IOException {
        List<Part> files = new ArrayList<>();
        try {
            for (Part part : request.getParts()) {
                if ("file".equals(part.getName())) {
                    files.add(part);
                }
            }
        } catch (ServletException | IllegalStateException e) {
            throw ChatException.invalidInput("the multipart body could not be read: " + e.getMessage());
        }
        if (files.size() != 1) {
            throw ChatException.invalidInput("a multipart upload carries exactly one part named \"file\", got "
                    + files.size());
        }
        return files.get(0);
    }

    private static ResponseEntity<byte[]> created(Attachment attachment) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", attachment.id());
        body.put("threadId", attachment.threadId());
        body.put("name", attachment.name());
        body.put("mediaType", attachment.mediaType());
        body.put("size", attachment.size());
        body.put("sha256", attachment.sha256());
        body.put("createdAt", attachment.createdAt());
        return JsonBodies.json(HttpStatus.CREATED, body);
    }

    private static void copy(InputStream in, OutputStream out, long length) throws IOException {
        byte[] buffer = new byte[COPY_BUFFER];
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) {
                throw new ChatException(dev.parley.chat.ErrorCode.STORE_FAILURE, "the attachment's stored bytes end"
                        + " before its size");
            }
            out.write(buffer, 0, n);
            left -= n;
        }
    }

    /** One byte range of a {@code Range} header, or the whole file, or none that can be served. */
    record ByteRange(long start, long end) {
        static final ByteRange WHOLE = new ByteRange(-1, -1);
        static final ByteRange UNSATISFIABLE = new ByteRange(-2, -2);

        /**
         * A single {@code bytes=a-b}, {@code bytes=a-} or {@code bytes=-n} range; the whole file for no header,
         * another unit, several ranges or a malformed one (RFC 9110 lets a server ignore those).
         */
        static ByteRange parse(@Nullable String header, long size) {
            if (header == null || !header.startsWith("bytes=") || header.contains(",")) {
                return WHOLE;
            }
            String spec = header.substring("bytes=".length()).strip();
            int dash = spec.indexOf('-');
            if (dash < 0) {
                return WHOLE;
            }
            try {
                String first = spec.substring(0, dash).strip();
                String last = spec.substring(dash + 1).strip();
                if (first.isEmpty()) {
                    long suffix = Long.parseLong(last);
                    if (suffix <= 0) {
                        return UNSATISFIABLE;
                    }
                    return new ByteRange(Math.max(0, size - suffix), size - 1);
                }
                long start = Long.parseLong(first);
                long end = last.isEmpty() ? size - 1 : Math.min(Long.parseLong(last), size - 1);
                if (start < 0 || end < start && !last.isEmpty() && Long.parseLong(last) < start) {
                    return WHOLE;
                }
                return start >= size ? UNSATISFIABLE : new ByteRange(start, end);
            } catch (NumberFormatException e) {
                return WHOLE;
            }
        }
    }
}
