package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.spring.internal.tomcat.SizedBufferHttp11NioProtocol;
import dev.parley.chat.spring.internal.tomcat.TomcatBuffers;
import org.junit.jupiter.api.Test;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.util.unit.DataSize;

/** {@code parley.web.tomcat.*}: nothing changes while unset, and bad values are refused before the server starts. */
class TomcatBuffersTest {
    @Test
    void unsetChangesNothing() {
        TomcatServletWebServerFactory factory = new TomcatServletWebServerFactory();
        String protocol = factory.getProtocol();
        new TomcatBuffers(new ParleyTomcatProperties()).customize(factory);
        assertThat(factory.getProtocol()).isEqualTo(protocol);
        assertThat(factory.getConnectorCustomizers()).isEmpty();
        assertThat(factory.getProtocolHandlerCustomizers()).isEmpty();
    }

    @Test
    void aResponseBufferSizeSwitchesToTheSizedProtocol() {
        TomcatServletWebServerFactory factory = new TomcatServletWebServerFactory();
        ParleyTomcatProperties properties = new ParleyTomcatProperties();
        properties.setResponseBufferSize(DataSize.ofKilobytes(2));
        new TomcatBuffers(properties).customize(factory);
        assertThat(factory.getProtocol()).isEqualTo(SizedBufferHttp11NioProtocol.class.getName());
        assertThat(factory.getProtocolHandlerCustomizers()).hasSize(1);
    }

    @Test
    void sizesOutOfRangeAreRefused() {
        ParleyTomcatProperties tiny = new ParleyTomcatProperties();
        tiny.setConnectionBufferSize(DataSize.ofBytes(100));
        assertThatThrownBy(() -> new TomcatBuffers(tiny)).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION))
                .hasMessageContaining("parley.web.tomcat.connection-buffer-size");
        ParleyTomcatProperties huge = new ParleyTomcatProperties();
        huge.setResponseBufferSize(DataSize.ofMegabytes(2));
        assertThatThrownBy(() -> new TomcatBuffers(huge)).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION))
                .hasMessageContaining("parley.web.tomcat.response-buffer-size");
    }

    @Test
    void aResponseBufferSizeOnAnotherProtocolIsRefused() {
        TomcatServletWebServerFactory factory = new TomcatServletWebServerFactory();
        factory.setProtocol("org.apache.coyote.http11.Http11Nio2Protocol");
        ParleyTomcatProperties properties = new ParleyTomcatProperties();
        properties.setResponseBufferSize(DataSize.ofKilobytes(1));
        assertThatThrownBy(() -> new TomcatBuffers(properties).customize(factory)).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION))
                .hasMessageContaining("Http11Nio2Protocol");
        assertThat(factory.getProtocol()).isEqualTo("org.apache.coyote.http11.Http11Nio2Protocol");
    }
}
