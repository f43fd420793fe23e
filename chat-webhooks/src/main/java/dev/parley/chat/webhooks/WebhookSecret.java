package dev.parley.chat.webhooks;

import dev.parley.chat.ChatException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

/**
 * An endpoint's signing secret in the Standard Webhooks form: {@code whsec_} followed by the Base64 of the HMAC
 * key (16 to 64 bytes; the specification recommends 24 to 64). Immutable and thread-safe; its
 * {@link #toString()} never shows the key.
 */
public final class WebhookSecret {
    /** The prefix of a secret's text form. */
    public static final String PREFIX = "whsec_";
    private static final int MIN_KEY_BYTES = 16;
    private static final int MAX_KEY_BYTES = 64;

    private final byte[] key;

    private WebhookSecret(byte[] key) {
        this.key = key;
    }

    /**
     * Reads a secret.
     *
     * @throws ChatException CONFIGURATION if it is null, lacks the {@code whsec_} prefix, is not Base64, or its
     *     key is shorter than 16 or longer than 64 bytes (the message never repeats the secret)
     */
    public static WebhookSecret parse(String text) {
        if (text == null || !text.startsWith(PREFIX)) {
            throw ChatException.configuration("a webhook secret must be whsec_ followed by the Base64 of its key");
        }
        byte[] key;
        try {
            key = Base64.getDecoder().decode(text.substring(PREFIX.length()).trim());
        } catch (IllegalArgumentException e) {
            throw ChatException.configuration("a webhook secret must be whsec_ followed by the Base64 of its key;"
                    + " the part after whsec_ is not Base64");
        }
        if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
            throw ChatException.configuration("a webhook secret's key must be " + MIN_KEY_BYTES + " to " + MAX_KEY_BYTES
                    + " bytes, got " + key.length);
        }
        return new WebhookSecret(key);
    }

    /** A new random secret with a 32-byte key, for a host that makes its endpoints' secrets itself. */
    public static WebhookSecret generate() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return new WebhookSecret(key);
    }

    /** The key's bytes (a copy). */
    public byte[] key() {
        return key.clone();
    }

    /** The secret's text form, {@code whsec_…}: to hand to the receiver. */
    public String reveal() {
        return PREFIX + Base64.getEncoder().encodeToString(key);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof WebhookSecret secret && Arrays.equals(key, secret.key);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(key);
    }

    /** {@code whsec_***}: never the key. */
    @Override
    public String toString() {
        return PREFIX + "***";
    }
}
