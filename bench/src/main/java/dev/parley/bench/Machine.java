package dev.parley.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;

/** The machine and JVM the suite runs on, read at run time. */
final class Machine {
    final int cores = Runtime.getRuntime().availableProcessors();
    final String cpu = cpuModel();
    final long memoryBytes = physicalMemory();
    final String os = osName();
    final String jdk = System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + " ("
            + System.getProperty("java.vendor") + ")";
    final String jvmArgs = String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments());
    final long maxHeap = Runtime.getRuntime().maxMemory();
    final String gc = gcNames();
    final String date = ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z"));

    void printMarkdown(PrintStream out) {
        out.println("- date: " + date);
        out.println("- machine: " + cores + " cores (" + cpu + "), " + Fmt.num(memoryBytes / (1024.0 * 1024 * 1024)) + " GiB RAM, "
                + os);
        out.println("- JDK: " + jdk + "; max heap " + Fmt.mb(maxHeap) + ", GC " + gc
                + (jvmArgs.isBlank() ? "" : ", JVM args: `" + jvmArgs + "`"));
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    private static long physicalMemory() {
        try {
            java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean) {
                return ((com.sun.management.OperatingSystemMXBean) os).getTotalMemorySize();
            }
        } catch (RuntimeException | LinkageError e) {
            // fall through
        }
        return -1;
    }

    private static String osName() {
        String pretty = null;
        try {
            List<String> lines = Files.readAllLines(Path.of("/etc/os-release"));
            for (String line : lines) {
                if (line.startsWith("PRETTY_NAME=")) {
                    pretty = line.substring("PRETTY_NAME=".length()).replace("\"", "");
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        String kernel = System.getProperty("os.name") + " " + System.getProperty("os.version");
        return pretty == null ? kernel : pretty + ", " + kernel;
    }

    private static String gcNames() {
        StringBuilder b = new StringBuilder();
        for (var bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (b.length() > 0) {
                b.append(" + ");
            }
            b.append(bean.getName());
        }
        return b.toString();
    }
}
