package dev.parley.example;

import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.runtime.HostToolSpec;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The example host's own action, offered to the agent: {@code refund_order}, which a person approves (and
 * may edit) before it runs. Nothing is refunded: the handler says what it would have done. With the
 * simulator, a message such as "action refund_order for order 42" calls it.
 */
@Configuration(proxyBeanMethods = false)
class ExampleHostActions {
    static final String REFUND_SCHEMA = """
            {"type":"object","properties":{"order":{"type":"integer","description":"the order number"},\
            "amount":{"type":"number","description":"how much to refund, in euros"}}}""";

    @Bean
    HostAction refundOrder() {
        return new HostAction(new HostToolSpec("refund_order", "Refunds an order to the customer's card", REFUND_SCHEMA),
                call -> "Refunded (simulated) with " + call.arguments(),
                HostActionApproval.always(call -> "Refunds the order to the customer's card (simulated). "
                        + "A real refund cannot be undone.").withEditableArguments());
    }
}
