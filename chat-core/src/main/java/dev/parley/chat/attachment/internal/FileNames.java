package dev.parley.chat.attachment.internal;

import java.text.Normalizer;
import org.jspecify.annotations.Nullable;

/** Makes a file name safe to store, show and put in a {@code Content-Disposition}. */
public final class FileNames {
    /** The longest name kept, in characters. */
    public static final int MAX_LENGTH = 200;

    private FileNames() {
    }

    /**
     * The name without any path (the part after the last {@code /} or {@code \}), control characters, or
     * characters file systems refuse ({@code <>:"|?*}), without leading or trailing dots and spaces, at most
     * {@value #MAX_LENGTH} characters (the extension kept); {@code "file"} when nothing is left.
     */
    public static String sanitise(@Nullable String name) {
        if (name == null) {
            return "file";
        }
        String base = Normalizer.normalize(name, Normalizer.Form.NFC);
        base = base.substring(Math.max(base.lastIndexOf('/'), base.lastIndexOf('\\')) + 1);
        StringBuilder kept = new StringBuilder(base.length());
        base.codePoints()
                .filter(c -> !Character.isISOControl(c) && "<>:\"|?*".indexOf(c) < 0
                        && Character.getType(c) != Character.FORMAT)
                .forEach(kept::appendCodePoint);
        String clean = kept.toString().replaceAll("^[.\\s]+|[.\\s]+$", "");
        if (clean.length() > MAX_LENGTH) {
            int dot = clean.lastIndexOf('.');
            String extension = dot > 0 && clean.length() - dot <= 16 ? clean.substring(dot) : "";
            clean = clean.substring(0, MAX_LENGTH - extension.length()) + extension;
        }
        return clean.isEmpty() ? "file" : clean;
    }

    /** The extension in lower case without the dot ({@code "md"}), or empty. */
    public static String extension(String name) {
        int dot = name.lastIndexOf('.');
        return dot < 0 ? "" : name.substring(dot + 1).toLowerCase(java.util.Locale.ROOT);
    }
}
