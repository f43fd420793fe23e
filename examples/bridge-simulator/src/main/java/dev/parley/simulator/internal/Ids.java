package dev.parley.simulator.internal;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * The ids the simulator makes up for a run's inputs and tool calls: unguessable (protocol section 4), so that
 * nobody who merely knows a run id can answer its questions or approvals blindly. Thread-safe.
 */
public final class Ids {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

    private Ids() {
    }

    /** {@code prefix-} followed by 128 random bits, URL-safe (e.g. {@code a-3qLx…} for an approval). */
    public static String next(String prefix) {
        byte[] bits = new byte[16];
        RANDOM.nextBytes(bits);
        return prefix + "-" + ENCODER.encodeToString(bits);
    }
}
