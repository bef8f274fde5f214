-- The durable writes of one paid checkout, as plain SQL: what PostgreSQL must do at the least
-- (2 transactions, 15 statements, 11 rows), run by pgbench beside the platform (floor.js).
-- JSON keeps a space after each colon: pgbench reads `:name` as a variable.
\set n random(1, 2000000000)
BEGIN;
INSERT INTO events (stream_id, stream_version, type, data) VALUES ('cs-' || :client_id || '-' || :n, 1, 'CheckoutSessionCreated', '{"amount_total":299}');
INSERT INTO sessions (id, status, document) VALUES ('cs-' || :client_id || '-' || :n, 'OPEN', '{"amount_total":299}');
COMMIT;
BEGIN;
SELECT document FROM sessions WHERE id = 'cs-' || :client_id || '-' || :n;
INSERT INTO events (stream_id, stream_version, type, data) VALUES ('cs-' || :client_id || '-' || :n, 2, 'PaymentCharged', '{"amount":299}'), ('cs-' || :client_id || '-' || :n, 3, 'CheckoutSessionCompleted', '{"amount_total":299}');
UPDATE sessions SET status = 'COMPLETE', document = '{"amount_total": 299, "paid": true}' WHERE id = 'cs-' || :client_id || '-' || :n;
INSERT INTO charges (key, amount) VALUES ('cs-' || :client_id || '-' || :n, 299);
INSERT INTO customers (id, email) VALUES ('cus-' || :client_id || '-' || :n, 'buyer-' || :client_id || '-' || :n || '@bench.example');
INSERT INTO subscriptions (id, customer_id, document) VALUES ('sub-' || :client_id || '-' || :n, 'cus-' || :client_id || '-' || :n, '{"price":299}');
INSERT INTO invoices (id, subscription_id, document) VALUES ('in-' || :client_id || '-' || :n, 'sub-' || :client_id || '-' || :n, '{"amount_paid":299}');
INSERT INTO events (stream_id, stream_version, type, data) VALUES ('sub-' || :client_id || '-' || :n, 1, 'SubscriptionActivated', '{"price":299}');
INSERT INTO processed_messages (consumer, event_id) VALUES ('billing', 'cs-' || :client_id || '-' || :n);
COMMIT;
