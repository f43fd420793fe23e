package dev.parley.chat.mcp.internal;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * The names the model sees for MCP tools: {@code <server>__<tool>}, every character outside
 * {@code [a-zA-Z0-9_-]} replaced by {@code _}, at most 64 characters (the model providers' limit). A name cut
 * short, or one that another tool already has after the replacement, ends in {@code _} and eight hex digits
 * of a checksum of the server and the tool's real name, so it stays the same from listing to listing.
 */
public final class ToolNames {
    /** The longest name the model providers accept. */
    public static final int MAX_LENGTH = 64;
    private static final int SUFFIX = 9;

    private ToolNames() {
    }

    /**
     * @param taken the names given already (to this server's other tools and every other server's)
     * @return the name for {@code tool} of {@code server}, not in {@code taken}
     */
    public static String name(String server, String tool, Set<String> taken) {
        String plain = (server + "__" + tool).replaceAll("[^a-zA-Z0-9_-]", "_");
        if (plain.length() <= MAX_LENGTH && !taken.contains(plain)) {
            return plain;
        }
        String head = plain.substring(0, Math.min(plain.length(), MAX_LENGTH - SUFFIX));
        String name = head + "_" + checksum(server + "/" + tool);
        for (int i = 2; taken.contains(name); i++) {
            name = head + "_" + checksum(server + "/" + tool + "#" + i);
        }
        return name;
    }

    private static String checksum(String text) {
        CRC32 crc = new CRC32();
        crc.update(text.getBytes(StandardCharsets.UTF_8));
        return String.format("%08x", crc.getValue());
    }
}
