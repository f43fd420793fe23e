package dev.parley.chat.observation;

import io.opentelemetry.sdk.trace.data.SpanData;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Draws one trace's spans as a timeline: a row per span, children under their parent, a bar for its time. */
final class TraceTimeline {
    static final int ROW = 26;
    private static final int LABEL = 300;
    private static final int WIDTH = 1000;
    private static final int TOP = 40;

    private TraceTimeline() {
    }

    /** The spans in tree order (each after its parent, siblings by start), with their depth. */
    static List<Row> rows(List<SpanData> spans) {
        List<Row> rows = new ArrayList<>();
        spans.stream().filter(s -> spans.stream().noneMatch(p -> p.getSpanId().equals(s.getParentSpanId())))
                .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
                .forEach(root -> add(root, 0, spans, rows));
        return rows;
    }

    private static void add(SpanData span, int depth, List<SpanData> spans, List<Row> rows) {
        rows.add(new Row(span, depth));
        spans.stream().filter(s -> s.getParentSpanId().equals(span.getSpanId()))
                .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
                .forEach(child -> add(child, depth + 1, spans, rows));
    }

    record Row(SpanData span, int depth) {
    }

    static BufferedImage render(List<SpanData> spans) {
        List<Row> rows = rows(spans);
        long start = spans.stream().mapToLong(SpanData::getStartEpochNanos).min().orElse(0);
        long end = spans.stream().mapToLong(SpanData::getEndEpochNanos).max().orElse(start + 1);
        double scale = (WIDTH - LABEL - 20) / (double) Math.max(1, end - start);
        int height = TOP + rows.size() * ROW + 30;
        BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, height);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.setColor(Color.DARK_GRAY);
        g.drawString("One Parley run, as OpenTelemetry exports it (" + (end - start) / 1_000_000 + " ms)", 10, 22);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            SpanData span = row.span();
            int y = TOP + i * ROW;
            g.setColor(i % 2 == 0 ? new Color(0xF4F6F8) : Color.WHITE);
            g.fillRect(0, y, WIDTH, ROW);
            g.setColor(Color.BLACK);
            g.drawString(span.getName(), 10 + row.depth() * 14, y + 17);
            int x = LABEL + (int) ((span.getStartEpochNanos() - start) * scale);
            int w = Math.max(2, (int) ((span.getEndEpochNanos() - span.getStartEpochNanos()) * scale));
            g.setColor(colour(span.getName()));
            g.fillRoundRect(x, y + 5, w, ROW - 10, 6, 6);
            g.setColor(Color.DARK_GRAY);
            String ms = (span.getEndEpochNanos() - span.getStartEpochNanos()) / 1_000_000 + " ms";
            int textX = x + w + 6 + g.getFontMetrics().stringWidth(ms) < WIDTH ? x + w + 6 : x - g.getFontMetrics().stringWidth(ms) - 6;
            g.drawString(ms, textX, y + 17);
        }
        g.setColor(Color.GRAY);
        g.setStroke(new BasicStroke(1));
        g.drawLine(LABEL, TOP - 4, LABEL, TOP + rows.size() * ROW);
        g.dispose();
        return image;
    }

    private static Color colour(String name) {
        if (name.startsWith("chat ")) {
            return new Color(0x4C78A8);
        }
        if (name.startsWith("execute_tool")) {
            return new Color(0xF58518);
        }
        if (name.startsWith("await_input")) {
            return new Color(0xE45756);
        }
        if (name.startsWith("store_write")) {
            return new Color(0xB279A2);
        }
        if (name.startsWith("invoke_agent")) {
            return new Color(0x54A24B);
        }
        return new Color(0x9D9D9D);
    }
}
