package dev.parley.chat.webhooks.internal;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The Standard Webhooks signature: {@code v1,} and the Base64 of HMAC-SHA256 over
 * {@code "{webhook-id}.{webhook-timestamp}.{body}"} with the secret's key. Stateless; thread-safe.
 */
public final class StandardWebhooksSigner {
    private StandardWebhooksSigner() {
    }

    /** The {@code webhook-signature} header's value for one delivery. */
    public static String sign(byte[] key, String messageId, long timestampSeconds, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            byte[] digest = mac.doFinal((messageId + "." + timestampSeconds + "." + body)
                    .getBytes(StandardCharsets.UTF_8));
            return "v1," + Base64.getEncoder().encodeToString(digest);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }
}
