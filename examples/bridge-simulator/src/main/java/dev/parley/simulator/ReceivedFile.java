package dev.parley.simulator;

/**
 * A file that came with a run's question ({@code attachments} of {@code POST /run}, protocol section 13), as the
 * simulator checked and decoded it. The simulator keeps no bytes, only what names them.
 *
 * @param name the name the person gave, as sent
 * @param size the decoded bytes' length
 * @param sha256 the SHA-256 of the decoded bytes, 64 lower-case hex digits
 */
public record ReceivedFile(String name, String mediaType, long size, String sha256) {

    /** How the simulated agent names it: {@code Received cat.png (image/png, 1234 bytes, sha256 0123456789ab)}. */
    public String describe() {
        return "Received " + name + " (" + mediaType + ", " + size + " bytes, sha256 " + sha256.substring(0, 12) + ")";
    }
}
