package dev.parley.bench;

import java.util.Locale;

/** Number formatting for the tables. */
final class Fmt {
    private Fmt() {
    }

    /** A rate or a count: thousands separated by a thin space-free comma, no decimals above 100. */
    static String num(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        if (Math.abs(value) >= 100) {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        if (Math.abs(value) >= 10) {
            return String.format(Locale.ROOT, "%.1f", value);
        }
        return String.format(Locale.ROOT, "%.2f", value);
    }

    static String ms(double millis) {
        if (Double.isNaN(millis)) {
            return "n/a";
        }
        if (millis >= 100) {
            return String.format(Locale.ROOT, "%,.0f ms", millis);
        }
        if (millis >= 10) {
            return String.format(Locale.ROOT, "%.1f ms", millis);
        }
        return String.format(Locale.ROOT, "%.2f ms", millis);
    }

    static String ratio(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.ROOT, "%.2f", value);
    }

    static String kb(double bytes) {
        return String.format(Locale.ROOT, "%.1f KB", bytes / 1024.0);
    }

    static String mb(double bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / (1024.0 * 1024.0));
    }

    static String pct(double value) {
        return String.format(Locale.ROOT, "%.0f %%", value * 100);
    }
}
