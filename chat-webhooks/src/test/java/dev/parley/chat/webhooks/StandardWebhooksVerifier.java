package dev.parley.chat.webhooks;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A receiver's check of a Standard Webhooks signature, written from the specification and independent of the
 * module's signer: the key is the Base64 after {@code whsec_}; the signed content is {@code id.timestamp.body};
 * the header holds space-separated {@code v1,<base64>} signatures, one of which must match (compared in constant
 * time).
 */
final class StandardWebhooksVerifier {
    private StandardWebhooksVerifier() {
    }

    static boolean verify(String secret, String id, String timestamp, String body, String signatureHeader) {
        try {
            byte[] key = Base64.getDecoder().decode(secret.substring("whsec_".length()));
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            byte[] expected = mac.doFinal((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8));
            for (String signature : signatureHeader.split(" ")) {
                if (signature.startsWith("v1,") && MessageDigest.isEqual(expected,
                        Base64.getDecoder().decode(signature.substring(3)))) {
                    return true;
                }
            }
            return false;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
