-- A handler's tables as probes see them (used by probe tests, SQLite and Postgres).
CREATE TABLE wallets (customer TEXT PRIMARY KEY, balance BIGINT NOT NULL);
INSERT INTO wallets (customer, balance) VALUES ('cus_b', 700), ('cus_a', 5000);
