/* token: balances per address, transfers with user errors.
 *   deploy: {"args": [supply]}                 -> the deployer holds `supply` (u64)
 *   {"": "balance_of", "args": [address]}      -> u64
 *   {"": "transfer", "args": [address, amount]} -> null; UserError "insufficient balance"
 *   {"": "total_supply"}                        -> u64 */
#include <string.h>

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

/* Opens m->args, checks its length, returns a reader at the first element. */
static gl_reader args(const gl_message* m, uint64_t count) {
  gl_reader r = m->args;
  gl_item it;
  if (!m->has_args || gl_next(&r, &it) || it.kind != GL_K_ARRAY || it.n != count) {
    gl_user_error("wrong number of arguments");
  }
  return r;
}

static uint64_t arg_u64(gl_reader* r) {
  gl_item it;
  if (gl_next(r, &it) || it.kind != GL_K_UINT || it.big) gl_user_error("expected an unsigned 64-bit integer");
  return it.u;
}

static void arg_address(gl_reader* r, uint8_t out[20]) {
  gl_item it;
  if (gl_next(r, &it) || it.kind != GL_K_ADDRESS) gl_user_error("expected an address");
  memcpy(out, it.data, 20);
}

static void run(const gl_message* m) {
  gl_slot supply_slot;
  gl_contract_slot(&supply_slot);
  if (m->is_init) {
    gl_reader r = args(m, 1);
    uint64_t supply = arg_u64(&r);
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
    gl_reader r = args(m, 1);
    uint8_t who[20];
    arg_address(&r, who);
    gl_enc_u64(&out, balance_of(who));
    gl_return(&out);
  }
  if (gl_method_is(m, "transfer")) {
    gl_reader r = args(m, 2);
    uint8_t to[20];
    arg_address(&r, to);
    uint64_t amount = arg_u64(&r);
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
