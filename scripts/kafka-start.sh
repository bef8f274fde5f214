#!/usr/bin/env bash
# Starts one Apache Kafka 3.9 broker in KRaft mode on 127.0.0.1:${KAFKA_PORT:-9092}.
# Jars come from Maven Central through mvn into a cache outside git; nothing is downloaded
# when the cache already holds them. Returns once the broker answers, or fails.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
port=${KAFKA_PORT:-9092}
controller_port=${KAFKA_CONTROLLER_PORT:-9093}
cache=${KAFKA_CACHE_DIR:-$HOME/.cache/billing-kafka}
libs="$cache/libs"
data="$cache/data-$port"
log="$cache/broker-$port.log"

broker_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

# KAFKA_RESET_DATA=1 (CI) starts from empty topics, so that consumer groups that read from the
# beginning never replay what earlier runs left behind.
if [ "${KAFKA_RESET_DATA:-0}" = 1 ]; then "$here/kafka-stop.sh"; fi

if broker_answers && [ -f "$cache/broker-$port.pid" ]; then
  echo "kafka: already running on 127.0.0.1:$port"
  exit 0
fi

for tool in java mvn; do
  command -v "$tool" >/dev/null || { echo "kafka: $tool is required (Debian: openjdk-17-jre-headless, maven)" >&2; exit 1; }
done

if [ ! -f "$libs/.complete" ]; then
  echo "kafka: fetching broker jars from Maven Central into $libs"
  mkdir -p "$libs"
  mvn -q -B -f "$here/kafka/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$libs" -DincludeScope=runtime
  touch "$libs/.complete"
fi

mkdir -p "$cache"
cat > "$cache/server-$port.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$data
num.partitions=3
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
PROPS

cat > "$cache/log4j.properties" <<'PROPS'
log4j.rootLogger=WARN, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${kafka.logs.file}
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaServer=INFO
log4j.logger.kafka.server.BrokerServer=INFO
PROPS

java_opts=(-Xms256m -Xmx512m -cp "$libs/*" "-Dlog4j.configuration=file:$cache/log4j.properties" "-Dkafka.logs.file=$log")

if [ ! -f "$data/meta.properties" ]; then
  rm -rf "$data"
  cluster_id=$(java "${java_opts[@]}" kafka.tools.StorageTool random-uuid)
  java "${java_opts[@]}" kafka.tools.StorageTool format -t "$cluster_id" -c "$cache/server-$port.properties" >/dev/null
fi

: > "$log"
echo "kafka: starting broker on 127.0.0.1:$port (log: $log)"
nohup java "${java_opts[@]}" kafka.Kafka "$cache/server-$port.properties" >>"$log" 2>&1 &
echo $! > "$cache/broker-$port.pid"

for _ in $(seq 1 120); do
  if broker_answers && grep -q "Transition from STARTING to STARTED" "$log" 2>/dev/null; then
    echo "kafka: ready on 127.0.0.1:$port"
    exit 0
  fi
  if ! kill -0 "$(cat "$cache/broker-$port.pid")" 2>/dev/null; then
    echo "kafka: broker exited; last log lines:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  sleep 1
done
echo "kafka: broker did not become ready within 120 s" >&2
tail -n 40 "$log" >&2
exit 1
