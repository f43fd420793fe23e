package dev.parley.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Repeated measurements of one figure: median, best, worst, spread. */
final class Stats {
    private final List<Double> values = new ArrayList<>();

    void add(double value) {
        values.add(value);
    }

    int count() {
        return values.size();
    }

    boolean isEmpty() {
        return values.isEmpty();
    }

    private List<Double> sorted() {
        List<Double> copy = new ArrayList<>(values);
        Collections.sort(copy);
        return copy;
    }

    double median() {
        List<Double> s = sorted();
        if (s.isEmpty()) {
            return Double.NaN;
        }
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    double min() {
        return sorted().isEmpty() ? Double.NaN : sorted().get(0);
    }

    double max() {
        List<Double> s = sorted();
        return s.isEmpty() ? Double.NaN : s.get(s.size() - 1);
    }

    /** Half the range relative to the median, in percent (±x %). */
    double spreadPercent() {
        double m = median();
        return m == 0 || Double.isNaN(m) ? Double.NaN : (max() - min()) / 2 / m * 100;
    }

    /** The sorted values, for the detailed log. */
    List<Double> values() {
        return sorted();
    }

    /** e.g. "51 200 ev/s (min 49 800, max 53 000, ±3.1 %, n=3)". */
    String describe(String unit) {
        return Fmt.num(median()) + " " + unit + " (min " + Fmt.num(min()) + ", max " + Fmt.num(max()) + ", n=" + count() + ")";
    }
}
