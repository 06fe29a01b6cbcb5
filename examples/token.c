/* token: balances per address, transfers with user errors.
 *   deploy: {"args": [supply]}                 -> the deployer holds `supply` (u64)
 *   {"": "balance_of", "args": [address]}      -> u64
 *   {"": "transfer", "args": [address, amount]} -> null; UserError "insufficient balance"
 *   {"": "total_supply"}                        -> u64 */
#include "genlayer.h"

static void balance_slot(const uint8_t owner[20], gl_slot* out) {
  gl_slot base;
  gl_contract_slot(&base);
  gl_slot_of_key(&base, owner, 20, out);
}

static uint64_t balance_of(const uint8_t owner[20]) {
  gl_slot s;
  balance_slot(owner, &s);
  return gl_storage_read_u64(&s, 0);
}

static void set_balance(const uint8_t owner[20], uint64_t v) {
  gl_slot s;
  balance_slot(owner, &s);
  if (gl_storage_write_u64(&s, 0, v) != GL_SUCCESS) gl_user_error("storage write refused");
}

static void run(const gl_message* m) {
  gl_slot supply_slot;
  gl_contract_slot(&supply_slot);
  if (m->is_init) {
    gl_args a;
    gl_args_open(m, 1, 1, &a);
    uint64_t supply = gl_arg_u64(&a);
    gl_args_check(&a);
    gl_storage_write_u64(&supply_slot, 0, supply);
    set_balance(m->sender_address, supply);
    gl_return(NULL);
  }
  gl_buf out = {0};
  if (gl_method_is(m, "total_supply")) {
    gl_enc_u64(&out, gl_storage_read_u64(&supply_slot, 0));
    gl_return(&out);
  }
  if (gl_method_is(m, "balance_of")) {
    gl_args a;
    gl_args_open(m, 1, 1, &a);
    uint8_t who[20];
    gl_arg_address(&a, who);
    gl_args_check(&a);
    gl_enc_u64(&out, balance_of(who));
    gl_return(&out);
  }
  if (gl_method_is(m, "transfer")) {
    gl_args a;
    gl_args_open(m, 2, 2, &a);
    uint8_t to[20];
    gl_arg_address(&a, to);
    uint64_t amount = gl_arg_u64(&a);
    gl_args_check(&a);
    uint64_t from_balance = balance_of(m->sender_address);
    if (from_balance < amount) gl_user_error("insufficient balance");
    set_balance(m->sender_address, from_balance - amount);
    uint64_t to_balance = balance_of(to); /* after the debit: a self-transfer nets to zero */
    if (to_balance + amount < to_balance) gl_user_error("balance overflow");
    set_balance(to, to_balance + amount);
    gl_return(NULL);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT(run)
