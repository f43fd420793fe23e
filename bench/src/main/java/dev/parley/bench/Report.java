package dev.parley.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The suite's results: one row per figure (with its limit or target, the ratio and whether the target is
 * met) and free-form notes (spreads, breakdowns, profiles). Printed as Markdown at the end of a run.
 */
final class Report {
    enum Verdict {
        MET("met"), NEAR("≈ met (short by less than the run-to-run spread)"), MISSED("**MISSED**"), INFO("—"),
        FAILED("**FAILED**"), JAVA17("— (Java 17: platform threads)");

        final String text;

        Verdict(String text) {
            this.text = text;
        }
    }

    record Row(String id, String what, String result, String target, String ratio, Verdict verdict) {
    }

    private final List<Row> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    synchronized void row(String id, String what, String result, String target, String ratio, Verdict verdict) {
        rows.add(new Row(id, what, result, target, ratio, verdict));
        System.out.println("  => " + id + " " + what + ": " + result + (target.isEmpty() ? "" : " | " + target)
                + (ratio.isEmpty() ? "" : " | ratio " + ratio) + " | " + verdict.text);
    }

    synchronized void note(String text) {
        notes.add(text);
        System.out.println("  -- " + text);
    }

    synchronized void print(PrintStream out, Machine machine, long suiteMillis) {
        out.println();
        out.println("## Parley benchmark results");
        out.println();
        machine.printMarkdown(out);
        out.println("- suite duration: " + Fmt.num(suiteMillis / 1000.0) + " s");
        out.println();
        out.println("| # | measurement | result | limit / target | ratio | verdict |");
        out.println("|---|---|---|---|---|---|");
        for (Row r : rows) {
            out.println("| " + r.id() + " | " + r.what() + " | " + r.result() + " | " + r.target() + " | " + r.ratio()
                    + " | " + r.verdict().text + " |");
        }
        if (!notes.isEmpty()) {
            out.println();
            out.println("Notes:");
            out.println();
            for (String n : notes) {
                out.println("- " + n);
            }
        }
        out.println();
    }
}
