// A tiny JMS consumer over OpenWire (ActiveMQ's own client jars): subscribes to a
// topic, prints "READY", then for each of COUNT messages its properties as
// "P<TAB>name<TAB>value", the timestamp read as a JMS long property, and whether
// it is a TextMessage with its text; "END" after each message.
// Usage: java JmsConsumer BROKER_URL TOPIC COUNT TIMEOUT_MS
import java.util.Enumeration;
import javax.jms.Connection;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.Session;
import javax.jms.TextMessage;
import org.apache.activemq.ActiveMQConnectionFactory;

public class JmsConsumer {
    public static void main(String[] args) throws Exception {
        Connection conn = new ActiveMQConnectionFactory(args[0]).createConnection();
        conn.start();
        Session session = conn.createSession(false, Session.AUTO_ACKNOWLEDGE);
        MessageConsumer consumer = session.createConsumer(session.createTopic(args[1]));
        System.out.println("READY");
        System.out.flush();
        int count = Integer.parseInt(args[2]);
        long timeout = Long.parseLong(args[3]);
        for (int i = 0; i < count; i++) {
            Message m = consumer.receive(timeout);
            if (m == null) {
                System.out.println("TIMEOUT");
                break;
            }
            Enumeration<?> names = m.getPropertyNames();
            while (names.hasMoreElements()) {
                String name = (String) names.nextElement();
                System.out.println("P\t" + name + "\t" + m.getStringProperty(name));
            }
            System.out.println("L\t" + m.getLongProperty("org.fcrepo.jms.timestamp"));
            if (m instanceof TextMessage) {
                System.out.println("TEXT\t" + ((TextMessage) m).getText().replace("\n", " "));
            } else {
                System.out.println("NOTTEXT\t" + m.getClass().getName());
            }
            System.out.println("END");
            System.out.flush();
        }
        conn.close();
    }
}
