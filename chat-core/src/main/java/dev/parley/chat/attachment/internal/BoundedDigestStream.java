package dev.parley.chat.attachment.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Passes a stream through, counting its bytes and hashing them (SHA-256); throws {@link ChatException}
 * TOO_LARGE as soon as more than {@code maxBytes} came through, so a huge upload is cut off early. Not
 * thread-safe.
 */
public final class BoundedDigestStream extends FilterInputStream {
    private final long maxBytes;
    private final String limitText;
    private final MessageDigest digest;
    private long count;

    /** @param limitText says which limit it is, for the error ("20971520 bytes per file") */
    public BoundedDigestStream(InputStream in, long maxBytes, String limitText) {
        super(in);
        this.maxBytes = maxBytes;
        this.limitText = limitText;
        try {
            this.digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            counted(1);
            digest.update((byte) b);
        }
        return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
        int n = super.read(buffer, offset, length);
        if (n > 0) {
            counted(n);
            digest.update(buffer, offset, n);
        }
        return n;
    }

    @Override
    public long skip(long n) {
        throw new UnsupportedOperationException("every byte must be hashed");
    }

    @Override
    public boolean markSupported() {
        return false;
    }

    private void counted(int n) {
        count += n;
        if (count > maxBytes) {
            throw new ChatException(ErrorCode.TOO_LARGE, "the attachment is larger than " + limitText);
        }
    }

    /** The bytes read so far. */
    public long count() {
        return count;
    }

    /** The SHA-256 of the bytes read so far, lowercase hex; call once, after reading to the end. */
    public String sha256() {
        return HexFormat.of().formatHex(digest.digest());
    }
}
